// A module-resolution hook (`module.register`) that resolves `electron`, for the modules of main/
// only, to the stand-in beside it (electron.ts, compiled by tsx like every other test source). Every
// other specifier resolves as usual; the real Electron package is never loaded.
const STAND_IN = new URL('./electron.ts', import.meta.url).href;
const MAIN = new URL('../../../main/', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'electron' && context.parentURL?.startsWith(MAIN)) return { url: STAND_IN, shortCircuit: true };
  return nextResolve(specifier, context);
}
