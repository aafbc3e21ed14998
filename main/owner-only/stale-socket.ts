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
  if (!st.isSocket()) throw refusal(path, 'it exists and is not a socket');
  if (st.uid !== currentUid()) throw refusal(path, `it is a socket owned by uid ${st.uid}, not by this user`);
  if (await somethingListens(path)) throw refusal(path, 'something is listening on it (is another gateway running?)');
  unlinkSync(path);
}

function somethingListens(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createConnection({ path });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    // ECONNREFUSED (a dead socket file) or any other error: nothing is listening.
    probe.once('error', () => {
      probe.destroy();
      resolve(false);
    });
  });
}

function refusal(path: string, reason: string): AccessError {
  return new AccessError(`refusing to bind ${path}: ${reason}`);
}
