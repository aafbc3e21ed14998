import { lstatSync, unlinkSync } from 'node:fs';
import { createConnection } from 'node:net';
import { AccessError, currentUid } from './platform.js';

/**
 * Clears the way for binding `path`. A leftover is removed only when it is a socket this user
 * owns and nothing listens on it; anything else is refused and left exactly where it is.
 */
export async function clearStaleSocket(path: string): Promise<void> {
  let st;
  try {
    st = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (!st.isSocket()) throw bindRefusal(path, 'it exists and is not a socket');
  if (st.uid !== currentUid()) throw bindRefusal(path, `it is a socket owned by uid ${st.uid}, not by this user`);
  const probe = await probeListener(path);
  if (probe === 'listening') throw bindRefusal(path, 'something is listening on it (is another gateway running?)');
  if (probe !== 'dead') throw bindRefusal(path, `something may be listening on it (connecting said ${probe}); is another gateway running?`);
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // gone meanwhile
  }
}

/**
 * Connects to `path`: 'listening', 'dead' when the kernel says nothing listens (ECONNREFUSED, or
 * ENOENT: gone meanwhile), else the error's code. A live gateway whose thread is stalled until its
 * listen backlog is full answers EAGAIN; taken for dead, its socket was unlinked under it.
 */
function probeListener(path: string): Promise<'listening' | 'dead' | string> {
  return new Promise((resolve) => {
    const probe = createConnection({ path });
    probe.once('connect', () => {
      probe.destroy();
      resolve('listening');
    });
    probe.once('error', (err: NodeJS.ErrnoException) => {
      probe.destroy();
      resolve(err.code === 'ECONNREFUSED' || err.code === 'ENOENT' ? 'dead' : (err.code ?? err.message));
    });
  });
}

/** Why binding the socket at `path` is refused, as every refusal to bind says it. */
export function bindRefusal(path: string, reason: string): AccessError {
  return new AccessError(`refusing to bind ${path}: ${reason}`);
}
