import { createHash } from 'node:crypto';
import { fstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { readRegularFileSync } from '../../owner-only/index.js';
import { ENTRY_PREFIX } from './entry.js';

/** Written beside a built example: what it was built from (`ensureExamplesBuilt`). Not a source. */
export const BUILD_STAMP = '.build-stamp';

/**
 * `sha256:<hex>` over a plugin directory's relative paths and file contents, in name order: its
 * sources, manifest and data, without what a build adds (`*.wasm`, the build's wrapper, the build
 * stamp). The bundled examples' build cache keys on it, and their `plugins.lock` is pinned to it:
 * the same sources give the same digest in the package and in the built copy. What a built
 * example's stamp records of the copy as built is `builtCopyDigest`'s (framed, all of it).
 */
export function sourcesDigest(dir: string): string {
  const hash = createHash('sha256');
  const walk = (path: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && !entry.name.endsWith('.wasm') && !entry.name.startsWith(ENTRY_PREFIX) && !(path === dir && entry.name === BUILD_STAMP)) {
        hash.update(relative(dir, full)).update('\0').update(readFileSync(full));
      }
    }
  };
  walk(dir);
  return `sha256:${hash.digest('hex')}`;
}

/** The most a built copy's digest reads, its files' bytes and 512 for each entry: past it the copy is no build's (they are a few MiB), and it is built anew. */
export const MAX_COPY_DIGEST_BYTES = 256 * 1024 * 1024;
/** What each entry of a copy costs the digest's budget, whatever its size (a million empty files is no build's either). */
const ENTRY_COST = 512;

/**
 * `<hex>` over a built example's copy as it is: every entry but the build stamp, in name order,
 * each framed (its kind, its relative name, then a file's length and bytes or a link's target,
 * every field length-prefixed) so no two copies hash alike: not `sourcesDigest`'s plain
 * name-then-bytes run, where a file removed and its name and bytes appended to the one before it
 * hashed the same. A link, a folder, a FIFO added to the copy change it too; none is followed or
 * opened but regular files (opened without following a link, never waiting). `undefined` when
 * the copy is over `maxBytes` or a file cannot be read as a regular file: not a copy as built.
 */
export function builtCopyDigest(dir: string, maxBytes = MAX_COPY_DIGEST_BYTES): string | undefined {
  const hash = createHash('sha256');
  let budget = maxBytes;
  const field = (value: string | Uint8Array): void => {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    const length = Buffer.alloc(8);
    length.writeBigUInt64BE(BigInt(bytes.length));
    hash.update(length).update(bytes);
  };
  const walk = (path: string): boolean => {
    for (const entry of readdirSync(path, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (path === dir && entry.name === BUILD_STAMP) continue;
      budget -= ENTRY_COST;
      if (budget < 0) return false;
      const full = join(path, entry.name);
      const name = relative(dir, full);
      if (entry.isDirectory()) {
        field('folder');
        field(name);
        if (!walk(full)) return false;
      } else if (entry.isFile()) {
        field('file');
        field(name);
        const read = readBounded(full, budget);
        if (read === undefined) return false;
        budget -= read.length;
        field(read);
      } else if (entry.isSymbolicLink()) {
        field('link');
        field(name);
        field(readlinkSync(full));
      } else {
        field('other');
        field(name);
      }
    }
    return true;
  };
  try {
    return walk(dir) ? hash.digest('hex') : undefined;
  } catch {
    return undefined; // a folder that cannot be listed, a link that cannot be read: not as built
  }
}

/**
 * A regular file's bytes, at most `maxBytes` (else `undefined`), read by owner-only's reader
 * (opened without following a link and never waiting: a FIFO swapped in). A file cut short while
 * read is refused too: the shared reader hands back the bytes it got, so the size is taken from
 * the same descriptor before the read (its `judge`) and the bytes must be all of it.
 */
function readBounded(path: string, maxBytes: number): Buffer | undefined {
  let size = -1;
  const read = readRegularFileSync(path, { maxBytes }, (fd) => {
    size = fstatSync(fd).size;
  });
  return read.ok && read.bytes.length === size ? read.bytes : undefined;
}
