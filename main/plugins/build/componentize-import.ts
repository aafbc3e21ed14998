import { register } from 'node:module';

type Componentize = typeof import('@bytecodealliance/componentize-js');

const FROM_SOURCE = import.meta.url.endsWith('.ts');

let hooked = false;

/**
 * componentize-js, imported so that it finds `@bytecodealliance/preview2-shim` wherever npm put
 * it: componentize-js imports the shim without declaring it (only as its devDependency), and in
 * a project whose tree npm reconciled (jco-std's optional peer wants another shim version) no copy
 * is left at the top of node_modules, only ones nested under this package and jco. Resolve hooks
 * registered once in this process (`shim-resolve-hooks.ts`) resolve the shim from this package
 * when componentize-js's own import of it fails, and leave every other import as it is.
 */
export async function importComponentize(): Promise<Componentize> {
  if (!hooked) {
    hooked = true;
    const hooks = new URL(FROM_SOURCE ? './shim-resolve-hooks.ts' : './shim-resolve-hooks.js', import.meta.url);
    register(hooks, { data: { shimParent: import.meta.url } });
  }
  return import('@bytecodealliance/componentize-js');
}
