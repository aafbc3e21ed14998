// Where this package lies: the folder `handleAppProtocol` serves the popover module and the demo
// page from, and the preload every app window runs. pages-guard.ts keeps the agents' workspace
// apart from it; app-modules.ts keeps an unpackaged launch in it from becoming their workspace.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package's root: three levels up from the build's out/main/app/, two from the sources (the
 * tests run them as they are). The built files (the preload, the renderer) are under its out/.
 */
export const PACKAGE_ROOT = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../../' : '../../../', import.meta.url));

/** The absolute path of the built, sandbox-safe preload (it requires nothing but `electron`). */
export const preloadPath = join(PACKAGE_ROOT, 'out', 'preload', 'index.cjs');
