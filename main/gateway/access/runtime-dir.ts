import { lstatSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { AccessError, currentUid } from './platform.js';

/** `<user cache dir>` as the platform names it (what `dirs::cache_dir` would say). */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches');
  return env.XDG_CACHE_HOME && env.XDG_CACHE_HOME.startsWith('/')
    ? env.XDG_CACHE_HOME
    : join(homedir(), '.cache');
}

/** `$XDG_RUNTIME_DIR/chatty-run`, else `<user cache dir>/chatty-run`. */
export function defaultRuntimeDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg && xdg.startsWith('/')) return join(xdg, 'chatty-run');
  return join(userCacheDir(env), 'chatty-run');
}

/**
 * Creates the runtime directory (0700, parents as needed) or checks an existing one.
 * Refuses a symlink, a non-directory, another user's directory, or any group/other bit:
 * the socket's only protection is the directory around it.
 */
export function ensureRuntimeDir(dir: string): string {
  const path = resolve(dir);
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const st = lstatSync(path);
  if (st.isSymbolicLink()) throw refusal(path, 'it is a symlink');
  if (!st.isDirectory()) throw refusal(path, 'it is not a directory');
  if (st.uid !== currentUid()) throw refusal(path, `it is owned by uid ${st.uid}, not by this user (uid ${currentUid()})`);
  const open = st.mode & 0o077;
  if (open !== 0) {
    throw refusal(path, `its mode is ${(st.mode & 0o777).toString(8).padStart(4, '0')}; group and others must have no access (chmod 700)`);
  }
  return path;
}

function refusal(path: string, reason: string): AccessError {
  return new AccessError(`refusing runtime directory ${path}: ${reason}`);
}
