import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * The outermost directory on the way to `path` that does not exist yet: the first one `mkdir -p
 * path` creates, and the one to remove to leave things as they were. Undefined when `path` exists.
 */
export function outermostMissing(path: string): string | undefined {
  let missing: string | undefined;
  for (let dir = resolve(path); !existsSync(dir); dir = dirname(dir)) {
    missing = dir;
    if (dirname(dir) === dir) break;
  }
  return missing;
}
