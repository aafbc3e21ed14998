import { randomBytes } from 'node:crypto';
import { linkSync, lstatSync, openSync, renameSync, rmSync, type Stats } from 'node:fs';

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
    let judged: Stats;
    try {
      judged = lstatSync(lock); // not stat: a dangling link planted there would read as released, for ever
    } catch {
      continue; // released meanwhile
    }
    const age = Date.now() - judged.mtimeMs;
    if (age <= LOCK_STALE_MS) return { heldForMs: age };
    try {
      removeStaleLock(lock, judged);
    } catch (err) {
      throw refuse(`cannot remove the stale lock ${lock}: ${(err as Error).message}`);
    }
  }
}

/**
 * Removes `lock` only if it is still the file judged stale (`judged`, its lstat). A taker that
 * removed whatever was at the path after judging could take another taker's fresh lock (both had
 * judged the crashed holder's lock stale; the first removed it and made its own): both then held
 * it. The lock is renamed aside first (atomic: exactly one file moves), then removed when it is
 * the judged one (inode and mtime: ext4 hands a freed inode number straight to the next file); a
 * fresh lock moved by mistake is linked back, which fails only when a third taker has made one in
 * that window.
 */
export function removeStaleLock(lock: string, judged: Stats): void {
  const aside = `${lock}.stale-${process.pid}-${randomBytes(6).toString('hex')}`;
  try {
    renameSync(lock, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // another taker removed it
    throw err;
  }
  const moved = lstatSync(aside);
  if (moved.ino !== judged.ino || moved.dev !== judged.dev || moved.mtimeMs !== judged.mtimeMs) {
    try {
      linkSync(aside, lock);
    } catch {
      // A third taker made a lock meanwhile: it holds it.
    }
  }
  rmSync(aside, { force: true });
}
