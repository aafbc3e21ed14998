import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/**
 * A file's bytes, read without blocking and only from a regular file of at most `maxBytes`: a
 * FIFO (whose blocking open would stall the process until a writer came), `/dev/zero` or a huge
 * file throws (`not a regular file`, `over N bytes`), never waited on or read whole. `noFollow`:
 * a symbolic link in the last place is refused too (the caller resolved the path already).
 */
export function readRegularFileSync(path: string, maxBytes: number, { noFollow = false }: { noFollow?: boolean } = {}): Buffer {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (noFollow ? constants.O_NOFOLLOW : 0));
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error('not a regular file');
    if (st.size > maxBytes) throw new Error(`over ${maxBytes} bytes`);
    const bytes = Buffer.alloc(st.size);
    let at = 0;
    while (at < bytes.length) {
      const n = readSync(fd, bytes, at, bytes.length - at, at);
      if (n === 0) break;
      at += n;
    }
    return bytes.subarray(0, at);
  } finally {
    closeSync(fd);
  }
}
