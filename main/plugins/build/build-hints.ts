/**
 * What a plugin written in JavaScript tells its author at load when its component is missing or
 * older than its sources: the `plugin build` command to run, for the directory it is in.
 */
import { opendirSync, statSync, type Dir } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { shellWord } from '../../shell/shell-word.js';
import { ENTRY_PREFIX } from './entry.js';

/** The command that builds the plugin in `dir`, ready to paste. */
export function buildCommand(dir: string): string {
  return `npx chatty-gateway plugin build ${shellWord(dir)}`;
}

/** Folders that hold no source of the plugin's own: dependencies, the WIT, dot folders (.git). */
const NOT_SOURCE_DIRS = new Set(['node_modules', 'wit']);
/** Enough for any hand-written plugin; a larger tree is not walked further (it is a warning, not a check). */
const MAX_ENTRIES = 5_000;
/**
 * Bounds on the folders the walk opens, which the entry count does not bound in time: each open
 * looks its whole path up again, so a chain 2,000 deep cost 0.7-1.7 s, and 5,000 empty folders
 * 300 ms. `src/lib/util/x.js` is 3 deep; the modules watch goes 6 deep too.
 */
const MAX_DEPTH = 6;
const MAX_FOLDERS = 500;

/**
 * The plugin's JavaScript files (relative to `dir`, `/`-separated) changed after the component at
 * `wasmPath` was written: a component built before the latest edit, which would serve old code.
 */
export function sourcesNewerThan(dir: string, wasmPath: string): string[] {
  const built = statSync(wasmPath, { throwIfNoEntry: false })?.mtimeMs;
  if (built === undefined) return [];
  const newer: string[] = [];
  let budget = MAX_ENTRIES;
  let folders = MAX_FOLDERS;
  const walk = (path: string, depth: number): void => {
    if (depth > MAX_DEPTH || --folders < 0) return;
    // Entries one at a time, never a directory read whole: a folder of a million files costs the
    // bound, not a million (this runs on the gateway's main thread at each load and look).
    let folder: Dir;
    try {
      folder = opendirSync(path);
    } catch {
      return; // an unreadable folder is not the plugin's source
    }
    try {
      for (let entry = folder.readSync(); entry !== null; entry = folder.readSync()) {
        if (--budget < 0) return;
        const full = join(path, entry.name);
        if (entry.isDirectory()) {
          if (!entry.name.startsWith('.') && !NOT_SOURCE_DIRS.has(entry.name)) walk(full, depth + 1);
        } else if (entry.isFile() && /\.(?:m?js|cjs)$/.test(entry.name) && !entry.name.startsWith(ENTRY_PREFIX)) {
          if ((statSync(full, { throwIfNoEntry: false })?.mtimeMs ?? 0) > built) newer.push(relative(dir, full).split(sep).join('/'));
        }
      }
    } catch {
      return; // a folder that vanished while read: what was read stands
    } finally {
      folder.closeSync();
    }
  };
  walk(dir, 0);
  return newer.sort(); // the directory's own order is no order
}
