import { encodeFrame } from '../codec/frame-text.js';
import { wireError } from '../wire/wire-error.js';

/**
 * A reply that would put a frame over the receiver's cap cannot be sent: the receiver would close
 * the connection for it. Only that call fails, with a `failed` error in its place.
 */
export function fitReply(line: string, id: number, receiverMaxBytes: number): string {
  // A UTF-16 unit is at most 3 UTF-8 bytes: most lines need no byte count at all.
  if (line.length * 3 <= receiverMaxBytes) return line;
  const bytes = Buffer.byteLength(line, 'utf8');
  if (bytes <= receiverMaxBytes) return line;
  const error = wireError({ kind: 'failed', reason: `the reply is ${bytes} bytes, over the receiver's frame cap of ${receiverMaxBytes}` });
  return encodeFrame({ v: 3, id, error });
}
