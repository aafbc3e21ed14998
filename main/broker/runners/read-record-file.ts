import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

/** The longest record file read (a `gitdir` is one path and a newline). */
export const MAX_RECORD_FILE_BYTES = 64 * 1024;

/**
 * Reads a small file of git's records that a worker (running as the user) can write, as text; an
 * empty string when it is not a regular file of at most `MAX_RECORD_FILE_BYTES` (or cannot be
 * read). Opened without following a link and without blocking: a fifo put there would hold the
 * read, and one of libuv's four threads with it, until someone writes to it, and a sparse file of
 * gigabytes would be read whole.
 */
export async function readRecordFile(path: string): Promise<string> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => undefined);
  if (handle === undefined) return '';
  try {
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size > MAX_RECORD_FILE_BYTES) return '';
    const buffer = Buffer.alloc(MAX_RECORD_FILE_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return bytesRead > MAX_RECORD_FILE_BYTES ? '' : buffer.toString('utf8', 0, bytesRead);
  } catch {
    return '';
  } finally {
    await handle.close().catch(() => {});
  }
}
