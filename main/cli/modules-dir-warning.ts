import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { shellWord } from './shell-word.js';

/**
 * A `--modules-dir` that cannot be what the user meant: a plugin directory itself (the usual
 * slip after `plugin new`), or a folder with no plugin directory in it. Serving goes on (with
 * what there is), but the user hears why nothing is served. Undefined when the folder looks right.
 */
export function modulesDirWarning(dir: string): string | undefined {
  const path = resolve(dir);
  // A missing folder or a file is an error, and openModules says so.
  if (!statSync(path, { throwIfNoEntry: false })?.isDirectory()) return undefined;
  const rule = '--modules-dir takes the folder that holds plugin directories';
  if (existsSync(join(path, 'module.toml'))) {
    return `warning: ${rule}; ${path} is a plugin itself (it has module.toml): try --modules-dir ${shellWord(dirname(path))}`;
  }
  const holdsPlugin = readdirSync(path, { withFileTypes: true }).some(
    (entry) => entry.isDirectory() && existsSync(join(path, entry.name, 'module.toml')),
  );
  if (!holdsPlugin) return `warning: ${rule} (each with a module.toml); ${path} holds none`;
  return undefined;
}
