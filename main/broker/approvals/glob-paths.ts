/**
 * A write target the shell expands as a glob (`cp x k*.txt`) writes the files it matches on disk,
 * which the text alone does not name: expanded here against the file system, as bash would, so
 * that each file it writes is judged (a hard link among them, the gateway's own files). Bounded:
 * the globs of a request that need more than `MAX_GLOB_ENTRIES` names read, or one that matches more than
 * `MAX_GLOB_MATCHES` files, is not expanded (undefined: where it lands is not read, fails closed).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { globPart } from './gateway-config.js';

/** Names read from folders to expand the globs of one request, at most (shared by all its targets). */
export const MAX_GLOB_ENTRIES = 4_096;
/** Files one glob may match and still be judged one by one. */
export const MAX_GLOB_MATCHES = 64;

/** Whether a path holds a character the shell expands as a glob. */
export function isGlob(path: string): boolean {
  return /[*?[]/.test(path);
}

/**
 * The existing paths absolute `pattern` matches (its parts with `*`, `?`, `[…]` read against each
 * folder's names, case ignored: errs toward more matches); [] when none (bash then writes the
 * word as it is); undefined past the bounds or when a folder it must read cannot be read.
 */
export function globMatches(pattern: string, budget: { entriesLeft: number }): string[] | undefined {
  let bases = ['/'];
  for (const part of pattern.split('/').filter((p) => p !== '' && p !== '.')) {
    if (!isGlob(part)) {
      bases = bases.map((base) => join(base, part));
      continue;
    }
    const matcher = globPart(part.toLowerCase());
    const next: string[] = [];
    for (const base of bases) {
      let names: string[];
      try {
        names = readdirSync(base);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') continue; // nothing there to match
        return undefined;
      }
      budget.entriesLeft -= names.length;
      if (budget.entriesLeft < 0) return undefined;
      for (const name of names) if (matcher.test(name.toLowerCase())) next.push(join(base, name));
      if (next.length > MAX_GLOB_MATCHES) return undefined;
    }
    bases = next;
  }
  return bases;
}
