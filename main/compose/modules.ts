import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ensureExamplesBuilt, ModuleRegistry, type ModuleRegistryOptions, type ScanReport } from '../plugins/index.js';

export interface OpenModulesOptions {
  /** Where progress and per-module failures are reported (stderr in the CLI: stdout is for the ready line). */
  report?: (line: string) => void;
  registry?: ModuleRegistryOptions;
}

export interface OpenedModules {
  registry: ModuleRegistry;
  scan: ScanReport;
}

/**
 * Opens the modules to serve: those in `modulesDir`, else the bundled examples (built with
 * componentize-js on first use, then cached). Shared by the headless CLI and the desktop app so
 * both serve the same thing. A bad module is reported and skipped; it never stops the others.
 */
export async function openModules(modulesDir?: string, options: OpenModulesOptions = {}): Promise<OpenedModules> {
  const report = options.report ?? (() => {});
  if (modulesDir !== undefined) assertDirectory(modulesDir);
  const dir = modulesDir ?? (await ensureExamplesBuilt(undefined, { onProgress: report }));
  const registry = new ModuleRegistry(options.registry);
  try {
    const scan = await registry.scanDirectory(dir);
    for (const failed of scan.failed) report(`module not loaded: ${failed.dir}: ${failed.reason}`);
    for (const loaded of scan.loaded) for (const warning of loaded.warnings) report(`module ${loaded.name}: ${warning}`);
    for (const remote of scan.remote) report(`module ${remote.name} is remote (${remote.executionMode}): reported, not loaded`);
    return { registry, scan };
  } catch (err) {
    await registry.close();
    throw err;
  }
}

/** A modules directory the user named must exist: serving nothing by mistake helps no one. */
function assertDirectory(dir: string): void {
  const path = resolve(dir);
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    throw new Error(`modules directory ${path} does not exist`);
  }
  if (!isDirectory) throw new Error(`modules directory ${path} is not a directory`);
}
