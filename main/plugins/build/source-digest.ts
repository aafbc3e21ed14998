import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ENTRY_PREFIX } from './entry.js';

/** Written beside a built example: what it was built from (`ensureExamplesBuilt`). Not a source. */
export const BUILD_STAMP = '.build-stamp';

/**
 * `sha256:<hex>` over a plugin directory's relative paths and file contents, in name order: its
 * sources, manifest and data, without what a build adds (`*.wasm`, the build's wrapper, the build
 * stamp). The bundled examples' build cache keys on it, and their `plugins.lock` is pinned to it:
 * the same sources give the same digest in the package and in the built copy. `withComponents`
 * takes the `*.wasm` files in too: what a built example's stamp records of the copy as built.
 */
export function sourcesDigest(dir: string, options: { withComponents?: boolean } = {}): string {
  const built = options.withComponents === true;
  const hash = createHash('sha256');
  const walk = (path: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && (built || !entry.name.endsWith('.wasm')) && !entry.name.startsWith(ENTRY_PREFIX) && !(path === dir && entry.name === BUILD_STAMP)) {
        hash.update(relative(dir, full)).update('\0').update(readFileSync(full));
      }
    }
  };
  walk(dir);
  return `sha256:${hash.digest('hex')}`;
}
