import { lstatSync, mkdirSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { AccessError, currentUid } from './platform.js';
import { assertSocketPathFits, socketPathFits } from './socket-path.js';

/** `<user cache dir>` as the platform names it (what `dirs::cache_dir` would say). */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches');
  return env.XDG_CACHE_HOME && env.XDG_CACHE_HOME.startsWith('/')
    ? env.XDG_CACHE_HOME
    : join(homedir(), '.cache');
}

/**
 * `$XDG_RUNTIME_DIR/chatty-run`, else `<user cache dir>/chatty-run`, else (when the path of
 * `socketFile` there would be too long for a Unix socket, as under a deep home directory on macOS)
 * `/tmp/chatty-run-<uid>`, which always fits. The directory checks of `ensureRuntimeDir` make a
 * directory in the shared /tmp as safe as the others: another user's is refused.
 */
export function defaultRuntimeDir(socketFile: string, env: NodeJS.ProcessEnv = process.env): string {
  const candidates: string[] = [];
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg && xdg.startsWith('/')) candidates.push(join(xdg, 'chatty-run'));
  candidates.push(join(userCacheDir(env), 'chatty-run'));
  return candidates.find((dir) => socketPathFits(join(dir, socketFile))) ?? join('/tmp', `chatty-run-${currentUid()}`);
}

export interface EnsureRuntimeDirOptions {
  /** The socket that will be bound in the directory; its path must fit a Unix socket address. */
  socketFile: string;
}

/**
 * Creates the runtime directory (0700, parents as needed) or checks an existing one.
 * Refuses a socket path too long to bind (before creating anything), a symlink, a
 * non-directory, another user's directory, or any group/other bit: the socket's only protection
 * is the directory around it.
 */
export function ensureRuntimeDir(dir: string, options: EnsureRuntimeDirOptions): string {
  const path = resolve(dir);
  try {
    assertSocketPathFits(join(path, options.socketFile));
  } catch (err) {
    throw refusal(path, (err as Error).message);
  }
  let st = lstatOrUndefined(path);
  if (st === undefined) {
    try {
      mkdirSync(path, { recursive: true, mode: 0o700 });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR' || code === 'EEXIST') throw refusal(path, 'a parent of it is not a directory');
      throw err;
    }
    st = lstatSync(path);
  }
  if (st.isSymbolicLink()) throw refusal(path, 'it is a symlink');
  if (!st.isDirectory()) throw refusal(path, 'it is not a directory');
  if (st.uid !== currentUid()) throw refusal(path, `it is owned by uid ${st.uid}, not by this user (uid ${currentUid()})`);
  const open = st.mode & 0o077;
  if (open !== 0) {
    throw refusal(path, `its mode is ${(st.mode & 0o777).toString(8).padStart(4, '0')}; group and others must have no access (chmod 700)`);
  }
  return path;
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ENOTDIR') throw refusal(path, 'a parent of it is not a directory');
    throw err;
  }
}

function refusal(path: string, reason: string): AccessError {
  return new AccessError(`refusing runtime directory ${path}: ${reason}`);
}
