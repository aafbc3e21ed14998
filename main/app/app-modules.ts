// What the desktop app serves and where its agents work, decided without Electron
// (test/app/app-modules.test.ts); main.ts passes in what Electron knows (`app.getPath`,
// `app.isPackaged`).
import { mkdirSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openModules, remoteModuleLine, type OpenModulesOptions } from '../compose/modules.js';
import type { ModuleRegistry, ScanReport } from '../plugins/index.js';
import { overlapsOwnFolder } from './pages-guard.js';

/** The folder a user drops plugin directories into: `<userData>/plugins`, created (mode 0700) if missing. */
export function userPluginsDir(userData: string): string {
  const dir = join(userData, 'plugins');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

export interface AppModules {
  registry: ModuleRegistry;
  /** The bundled examples' (or `modulesDir`'s) scan, then the user folder's. */
  scans: ScanReport[];
}

/**
 * The app's plugins: the bundled examples (built on first use, then cached), or the folder named
 * by `modulesDir` (CHATTY_MODULES_DIR) instead, and then every plugin in the user's folder. A bad
 * plugin is reported and skipped; a user plugin with a name already taken is refused (reported).
 */
export async function openAppModules(userPlugins: string, modulesDir: string | undefined, options: OpenModulesOptions = {}): Promise<AppModules> {
  const { registry, scan } = await openModules(modulesDir, options);
  try {
    const user = await registry.scanDirectory(userPlugins);
    for (const remote of user.remote) options.report?.(remoteModuleLine(remote, options.remoteRunner));
    return { registry, scans: [scan, user] };
  } catch (err) {
    await registry.close();
    throw err;
  }
}

/**
 * Where the bundled agents work: CHATTY_WORKSPACE when set; else, launched from a terminal
 * (not packaged), the directory it was started in, unless that is, holds or lies in this package's
 * folder (`npm start` runs in it: the agents would work where the popover and the preload lie, and
 * the bridge refuses that); else (a packaged app started from a desktop, whose working directory
 * is `/` or the home folder) `<userData>/workspace`, created.
 */
export function agentWorkspaceDir(options: { env: NodeJS.ProcessEnv; isPackaged: boolean; cwd: string; userData: string }): string {
  const named = options.env['CHATTY_WORKSPACE'];
  if (named !== undefined && named !== '') return named;
  if (!options.isPackaged && !overlapsOwnFolder(realOrAsIs(options.cwd))) return options.cwd;
  const dir = join(options.userData, 'workspace');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** `dir`'s real path, or `dir` resolved when it cannot be read (then it is compared as written). */
function realOrAsIs(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
}
