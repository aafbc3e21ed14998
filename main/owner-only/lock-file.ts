import { lstatSync, openSync, rmSync } from 'node:fs';

/** How long a taker waits for another's lock before refusing, and when a lock is a crashed holder's. */
export const LOCK_WAIT_MS = 5_000;
export const LOCK_STALE_MS = 10_000;

/**
 * One try at `lock` (created exclusively, 0600): its fd when taken, else how long another has
 * held it. A lock older than `LOCK_STALE_MS` is a crashed holder's: it is removed and tried again.
 */
export function tryLock(lock: string, refuse: (message: string) => Error): { fd: number } | { heldForMs: number } {
  for (;;) {
    try {
      return { fd: openSync(lock, 'wx', 0o600) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw refuse(`cannot lock ${lock}: ${(err as Error).message}`);
    }
    let age: number;
    try {
      age = Date.now() - lstatSync(lock).mtimeMs; // not stat: a dangling link planted there would read as released, for ever
    } catch {
      continue; // released meanwhile
    }
    if (age <= LOCK_STALE_MS) return { heldForMs: age };
    try {
      rmSync(lock, { force: true });
    } catch (err) {
      throw refuse(`cannot remove the stale lock ${lock}: ${(err as Error).message}`);
    }
  }
}
