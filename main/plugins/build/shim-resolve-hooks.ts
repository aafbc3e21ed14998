/**
 * Module resolve hooks (`node:module` `register`, see `componentize-import.ts`): componentize-js
 * imports `@bytecodealliance/preview2-shim` without declaring it, so from its folder the shim is
 * found only where npm happened to hoist it. When that import fails, and only then, it is
 * resolved again from this package, which declares the shim. Every other import resolves as it
 * would without these hooks.
 */
import type { InitializeHook, ResolveHook } from 'node:module';

export interface ShimResolveData {
  /** A module URL of this package: where the shim is looked up from when componentize-js finds none. */
  shimParent: string;
}

const SHIM = '@bytecodealliance/preview2-shim';
/** componentize-js's own files, wherever npm put the package. */
const COMPONENTIZE_FILES = '/node_modules/@bytecodealliance/componentize-js/';

let shimParent: string | undefined;

export const initialize: InitializeHook<ShimResolveData> = (data) => {
  shimParent = data.shimParent;
};

export const resolve: ResolveHook = async (specifier, context, nextResolve) => {
  try {
    return await nextResolve(specifier, context);
  } catch (err) {
    const isShim = specifier === SHIM || specifier.startsWith(`${SHIM}/`);
    const fromComponentize = context.parentURL?.includes(COMPONENTIZE_FILES) === true;
    if (shimParent === undefined || !isShim || !fromComponentize || (err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    return nextResolve(specifier, { ...context, parentURL: shimParent });
  }
};
