// A module-resolution hook (`module.register`) that resolves `electron`, for the modules of main/
// (and of the folders named in `data.parents`: an example app installed in a scratch project) only,
// to the stand-in beside it (electron.ts, compiled by tsx like every other test source). Every
// other specifier resolves as usual; the real Electron package is never loaded.
const STAND_IN = new URL('./electron.ts', import.meta.url).href;
const parents = [new URL('../../../main/', import.meta.url).href];

/** `register(…, { data: { parents: [folder URLs] } })` adds folders whose modules get the stand-in. */
export async function initialize(data) {
  for (const parent of data?.parents ?? []) parents.push(parent.endsWith('/') ? parent : `${parent}/`);
}

export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'electron' && parents.some((p) => context.parentURL?.startsWith(p))) return { url: STAND_IN, shortCircuit: true };
  return nextResolve(specifier, context);
}
