import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, readlinkSync, realpathSync, statSync, type Stats } from 'node:fs';
import { join, sep } from 'node:path';

export type ReadResult = { tag: 'ok'; val: Uint8Array } | { tag: 'err'; val: string };

/** Test seams: nothing in production passes these. */
export interface ReadHooks {
  /** Called after the path was resolved and checked, just before it is opened (a swap lands here). */
  beforeOpen?(resolved: string): void;
  /** Force the portable check of the opened file (no `/proc/self/fd`), as on macOS or Windows. */
  noProcFd?: boolean;
}

const PROC_FD = process.platform === 'linux';

/**
 * `file.read-bytes` below `root`, refusing absolute paths, drive letters, `\`, `..`, anything
 * whose real path (symlinks followed) leaves the root, non-regular files and files over
 * `maxBytes`. Synchronous on purpose: it runs on the guest's own worker thread, never on the main
 * thread.
 *
 * `root` must already be a real path (the registry resolves it once, at load): it is pinned, so
 * replacing the root directory by a symlink later does not move it.
 *
 * The path is resolved and checked first (for clear refusals), but the decision is made on the
 * file descriptor: the last component is opened with `O_NOFOLLOW` (and `O_NONBLOCK`, so a FIFO
 * swapped in never blocks), the descriptor is `fstat`ed (regular file, size), and the real path of
 * the opened file is read back from `/proc/self/fd/<n>` on Linux, or elsewhere re-resolved and
 * matched by device and inode. The bytes come from that same descriptor. A symlink or directory
 * swapped in between resolving and opening is therefore refused, never followed out of the root.
 */
export function readBelowRoot(root: string, path: string, maxBytes: number, hooks: ReadHooks = {}): ReadResult {
  const refuse = (why: string): ReadResult => ({ tag: 'err', val: `file: ${JSON.stringify(path)}: ${why}` });
  if (path.startsWith('/') || path.startsWith('\\')) return refuse('absolute paths are refused');
  if (/^[A-Za-z]:/.test(path)) return refuse('drive letters are refused');
  if (path.includes('\\')) return refuse('"\\" is refused; use "/"');
  if (path.includes('\0')) return refuse('NUL bytes are refused');
  if (path.split('/').includes('..')) return refuse('".." is refused');
  const prefix = root.endsWith(sep) ? root : root + sep;
  const inside = (real: string): boolean => real.startsWith(prefix);
  let target: string;
  try {
    target = realpathSync(join(root, path));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return refuse(code === 'ENOENT' ? 'no such file' : `cannot resolve (${code ?? 'error'})`);
  }
  if (target === root) return refuse('not a regular file');
  if (!inside(target)) return refuse('its real path leaves the [files] root');
  try {
    // Only a clear message: the descriptor below is what decides.
    if (!statSync(target).isFile()) return refuse('not a regular file');
  } catch (err) {
    return refuse(`cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  hooks.beforeOpen?.(target);
  let fd: number;
  try {
    fd = openSync(target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK') return refuse('it became a symlink while being opened');
    return refuse(code === 'ENOENT' ? 'no such file' : `cannot read (${code ?? 'error'})`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return refuse('not a regular file');
    const real = openedRealPath(fd, target, st, !hooks.noProcFd && PROC_FD);
    if (real === undefined || !inside(real)) return refuse('its real path leaves the [files] root');
    if (st.size > maxBytes) return refuse(`${st.size} bytes is over the ${maxBytes}-byte limit`);
    const out = new Uint8Array(st.size);
    let at = 0;
    while (at < out.length) {
      const n = readSync(fd, out, at, out.length - at, at);
      if (n === 0) break;
      at += n;
    }
    return { tag: 'ok', val: at === out.length ? out : out.subarray(0, at) };
  } catch (err) {
    return refuse(`cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  } finally {
    closeSync(fd);
  }
}

/**
 * Where the open descriptor really is. Linux: the kernel's own answer (`/proc/self/fd/<n>`).
 * Elsewhere: re-resolve the path and accept it only if it still names the very inode we opened.
 */
function openedRealPath(fd: number, opened: string, st: Stats, procFd: boolean): string | undefined {
  if (procFd) {
    try {
      const link = readlinkSync(`/proc/self/fd/${fd}`);
      return link.endsWith(' (deleted)') ? undefined : link;
    } catch {
      // /proc not mounted: fall through to the portable check
    }
  }
  try {
    const real = realpathSync(opened);
    const now = lstatSync(real);
    return now.dev === st.dev && now.ino === st.ino ? real : undefined;
  } catch {
    return undefined;
  }
}
