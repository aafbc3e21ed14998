import { encodeFrame } from '../codec/frame-text.js';
import { bytesOver } from '../codec/frame-too-large.js';
import { wireError } from '../wire/wire-error.js';

/**
 * A reply that would put a frame over the receiver's cap cannot be sent: the receiver would close
 * the connection for it. Only that call fails, with a `failed` error in its place.
 */
export function fitReply(line: string, id: number, receiverMaxBytes: number): string {
  const bytes = bytesOver(line, receiverMaxBytes);
  if (bytes === undefined) return line;
  const error = wireError({ kind: 'failed', reason: `the reply is ${bytes} bytes, over the receiver's frame cap of ${receiverMaxBytes}` });
  return encodeFrame({ v: 3, id, error });
}
