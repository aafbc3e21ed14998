import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PluginLoadError } from '../errors.js';

/** Where a plugin's JavaScript entry may live, in the order they are looked for. */
export const SOURCE_CANDIDATES = ['src/plugin.js', 'plugin.js', 'src/index.js', 'index.js'] as const;

/** The plugin's JavaScript entry in `dir`, or undefined when it has none (a component built elsewhere). */
export function pluginSourceIn(dir: string): string | undefined {
  for (const candidate of SOURCE_CANDIDATES) {
    const path = join(dir, candidate);
    if (existsSync(path) && statSync(path).isFile()) return path;
  }
  return undefined;
}

/** The plugin's JavaScript entry in `dir`; throws naming the places looked at. */
export function findPluginSource(dir: string): string {
  const source = pluginSourceIn(dir);
  if (source === undefined) throw new PluginLoadError(`no plugin source in ${dir}: expected one of ${SOURCE_CANDIDATES.join(', ')}`);
  return source;
}
