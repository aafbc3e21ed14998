import { writeSync } from 'node:fs';

/**
 * Writes all of `bytes` to `fd` straight away (`writeSync`), retried on EAGAIN: fd 3 is
 * non-blocking, and so may fd 2 be (a socketpair, where each one-byte write takes hundreds of
 * bytes of the send buffer: unretried, a dribbling worker died after ~280 bytes).
 */
export function writeAll(fd: number, bytes: Buffer): void {
  for (let at = 0; at < bytes.length; ) {
    try {
      at += writeSync(fd, bytes, at);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
    }
  }
}
