import { closeSync, rmSync, writeSync } from 'node:fs';
import type { Server } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { LOCK_WAIT_MS, tryLock } from './lock-file.js';
import { bindRefusal, clearStaleSocket } from './stale-socket.js';

/**
 * Clears a leftover at `path` (`clearStaleSocket`) and binds `server` to it, holding `<path>.lock`
 * throughout: two processes starting at once in one directory with a crashed launch's socket
 * there both found it dead and both unlinked it, the later unlink taking the earlier one's
 * freshly bound socket, and both then ran, one where nobody could reach it. Holding the lock, the
 * second finds the first's socket live and is refused. A lock older than 10 s is a crashed
 * starter's; after 5 s of waiting the bind is refused, naming the lock.
 */
export async function bindOwnSocket(path: string, server: Server): Promise<void> {
  const lock = `${path}.lock`;
  const refuse = (message: string) => bindRefusal(path, message);
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
    await listen(server, path);
  } finally {
    closeSync(fd);
    rmSync(lock, { force: true });
  }
}

/** `server.listen(path)`, settled when it listens or its bind fails (the error as Node gives it). */
function listen(server: Server, path: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
