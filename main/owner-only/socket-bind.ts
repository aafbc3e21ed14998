import { closeSync, rmSync, writeSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { LOCK_WAIT_MS, tryLock } from './lock-file.js';
import { AccessError } from './platform.js';
import { clearStaleSocket } from './stale-socket.js';

/**
 * Clears a leftover at `path` (`clearStaleSocket`) and binds it (`bind`), holding `<path>.lock`
 * throughout: two processes starting at once in one directory with a crashed launch's socket
 * there both found it dead and both unlinked it, the later unlink taking the earlier one's
 * freshly bound socket, and both then ran, one where nobody could reach it. Holding the lock, the
 * second finds the first's socket live and is refused. A lock older than 10 s is a crashed
 * starter's; after 5 s of waiting the bind is refused, naming the lock.
 */
export async function bindOwnSocket(path: string, bind: () => Promise<void>): Promise<void> {
  const lock = `${path}.lock`;
  const refuse = (message: string): AccessError => new AccessError(`refusing to bind ${path}: ${message}`);
  const deadline = Date.now() + LOCK_WAIT_MS;
  let fd: number;
  for (;;) {
    const attempt = tryLock(lock, refuse);
    if ('fd' in attempt) {
      fd = attempt.fd;
      break;
    }
    if (Date.now() > deadline) throw refuse(`${lock} has been held for ${Math.round(attempt.heldForMs / 1000)} s by another process starting there (remove it if none is)`);
    await delay(2 + Math.random() * 8);
  }
  try {
    writeSync(fd, `${process.pid}\n`);
    await clearStaleSocket(path);
    await bind();
  } finally {
    closeSync(fd);
    rmSync(lock, { force: true });
  }
}
