import { closeSync, rmSync, writeSync } from 'node:fs';
import { LOCK_WAIT_MS, tryLock } from './lock-file.js';

const nap = new Int32Array(new SharedArrayBuffer(4));

/** Locks this process holds now. A write nested in another's update (sync code only nests) is let through, not deadlocked for 5 s: the outer write then sees the file changed and starts again from it. */
const held = new Set<string>();

/**
 * Runs `write` holding `<path>.lock` (created exclusively, 0600): two processes updating one
 * owner-only file (`serve` granting at its prompt while `plugin grant` runs in another terminal)
 * take turns instead of each writing over what the other just added. The lock is held for one
 * read-change-rename, a few milliseconds; one older than 10 s is a crashed writer's and is
 * removed. After 5 s of waiting it refuses with `refuse(message)`, the file untouched.
 */
export function withWriteLock<R>(path: string, refuse: (message: string) => Error, write: () => R): R {
  const lock = `${path}.lock`;
  if (held.has(lock)) return write();
  const deadline = Date.now() + LOCK_WAIT_MS;
  let fd: number;
  for (;;) {
    const attempt = tryLock(lock, (message) => refuse(`${message}; nothing was written`));
    if ('fd' in attempt) {
      fd = attempt.fd;
      break;
    }
    if (Date.now() > deadline) throw refuse(`${lock} has been held for ${Math.round(attempt.heldForMs / 1000)} s by another writer; nothing was written (remove it if no chatty-gateway is writing)`);
    Atomics.wait(nap, 0, 0, 1 + Math.random() * 3); // synchronous, as the write is: a few ms
  }
  held.add(lock);
  try {
    writeSync(fd, `${process.pid}\n`);
    return write();
  } finally {
    held.delete(lock);
    closeSync(fd);
    rmSync(lock, { force: true });
  }
}
