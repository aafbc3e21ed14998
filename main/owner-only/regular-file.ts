import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

/**
 * How a file is read: at most `maxBytes`, and whether its own name may be a symbolic link. A second
 * name (a hard link) is not refused here: a check at the read misses one made and removed before it
 * (the app: scheme reads its files once at start instead, main/app/served-files.ts), and installers
 * that deduplicate by hard links (pnpm, Nix) would trip it.
 */
export interface RegularFileLimits {
  readonly maxBytes: number;
  /** Refuse a link at the path itself (O_NOFOLLOW): a file linked in from somewhere others write. Default true. */
  readonly noFollow?: boolean;
}

/**
 * What reading a file gave: its bytes, or why there are none. `missing` (ENOENT), `link` (a
 * symbolic link at the path, with `noFollow`), `not-regular` (a fifo, a socket, a device, a folder),
 * `too-large` (its size over `maxBytes`, `size` the size `fstat` gave the descriptor opened: a
 * second look by path may see another file, or none), `unreadable` (any other failure, `message`
 * saying it).
 */
export type RegularFileRead =
  | { readonly ok: true; readonly bytes: Buffer }
  | { readonly ok: false; readonly why: 'too-large'; readonly message: string; readonly size: number }
  | { readonly ok: false; readonly why: 'missing' | 'link' | 'not-regular' | 'unreadable'; readonly message: string };

/**
 * A regular file's bytes, read without blocking and bounded: opened `O_NONBLOCK` (a fifo planted at
 * the path would hold the open, and the thread with it, until someone wrote to it) and refused
 * unless `fstat` of that same descriptor says regular file of at most `maxBytes` (a sparse file of
 * gigabytes is never read); then read through that descriptor up to the size `fstat` gave: a file
 * growing meanwhile is cut there, never read on. The owner-only JSON files (grants, approval
 * rules), the app's pages and the plugins' manifest watcher read through it; the broker's worktree
 * records are still their own copy.
 */
export async function readRegularFile(path: string, limits: RegularFileLimits): Promise<RegularFileRead> {
  let handle;
  try {
    handle = await open(path, openFlags(limits));
  } catch (err) {
    return openFailure(err);
  }
  try {
    const stat = await handle.stat();
    const refusal = refusedByStat(stat, limits);
    if (refusal) return refusal;
    const buffer = Buffer.alloc(stat.size);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return { ok: true, bytes: buffer.subarray(0, filled) };
  } catch (err) {
    return unreadable(err);
  } finally {
    await handle.close().catch(() => {});
  }
}

/**
 * `readRegularFile` on the calling thread, for readers that are synchronous (the owner-only JSON
 * files). `judge`, when given, is handed the open descriptor once `fstat` said regular file within
 * `maxBytes`, before a byte is read: a reader's own checks (whose it is, its mode) are then made on
 * the file that is read, not on whatever the path names a moment later. What it throws is thrown.
 */
export function readRegularFileSync(path: string, limits: RegularFileLimits, judge?: (fd: number) => void): RegularFileRead {
  let fd: number;
  try {
    fd = openSync(path, openFlags(limits));
  } catch (err) {
    return openFailure(err);
  }
  try {
    let size: number;
    try {
      const stat = fstatSync(fd);
      const refusal = refusedByStat(stat, limits);
      if (refusal) return refusal;
      size = stat.size;
    } catch (err) {
      return unreadable(err);
    }
    judge?.(fd);
    try {
      const buffer = Buffer.alloc(size);
      let filled = 0;
      while (filled < buffer.length) {
        const bytesRead = readSync(fd, buffer, filled, buffer.length - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return { ok: true, bytes: buffer.subarray(0, filled) };
    } catch (err) {
      return unreadable(err);
    }
  } finally {
    closeSync(fd);
  }
}

function openFlags(limits: RegularFileLimits): number {
  const noFollow = limits.noFollow ?? true;
  return constants.O_RDONLY | constants.O_NONBLOCK | (noFollow ? (constants.O_NOFOLLOW ?? 0) : 0);
}

function openFailure(err: unknown): RegularFileRead {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return { ok: false, why: 'missing', message: 'it does not exist' };
  // O_NOFOLLOW on a link: ELOOP on Linux, EMLINK on FreeBSD, EFTYPE on some BSDs.
  if (code === 'ELOOP' || code === 'EMLINK' || code === 'EFTYPE') return { ok: false, why: 'link', message: 'it is a symbolic link' };
  return unreadable(err);
}

function refusedByStat(stat: { isFile(): boolean; size: number }, limits: RegularFileLimits): RegularFileRead | undefined {
  if (!stat.isFile()) return { ok: false, why: 'not-regular', message: 'it is not a regular file' };
  if (stat.size > limits.maxBytes) return tooLarge(limits.maxBytes, stat.size);
  return undefined;
}

function tooLarge(maxBytes: number, size: number): RegularFileRead {
  return { ok: false, why: 'too-large', message: `it is over ${maxBytes} bytes`, size };
}

function unreadable(err: unknown): RegularFileRead {
  return { ok: false, why: 'unreadable', message: err instanceof Error ? err.message : String(err) };
}
