import { encodeFrame } from './frame-text.js';

/**
 * What `FrameCodec.request` throws for a request whose line the peer could not read (over the
 * peer's frame cap): the peer would close the connection for it, so it is never sent.
 */
export class FrameTooLargeError extends RangeError {
  override readonly name = 'FrameTooLargeError';

  constructor(
    readonly method: string,
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(`the ${method} is ${bytes} bytes, over the receiver's frame cap of ${maxBytes}`);
  }
}

/** The line's size in UTF-8 bytes when it is over `maxBytes`, else undefined (most lines are counted without a byte count): for requests here and replies (`fitReply`). */
export function bytesOver(line: string, maxBytes: number): number | undefined {
  // A UTF-16 unit is at most 3 UTF-8 bytes.
  if (line.length * 3 <= maxBytes) return undefined;
  const bytes = Buffer.byteLength(line, 'utf8');
  return bytes > maxBytes ? bytes : undefined;
}

/**
 * A request's line under `id`, or `FrameTooLargeError` when it is over `maxBytes` (the peer's
 * frame cap): the one measure of a request, the codec's `request` and a check made before the
 * peer exists (`checkTaskRunSize`) alike. What cannot be encoded throws what encoding threw.
 */
export function requestLine(id: number, method: string, params: unknown, maxBytes: number): string {
  // Built whole (every request of the wire is its envelope, `method` and `params`): not a copy of a body.
  const line = encodeFrame({ v: 3, id, method, params });
  const over = bytesOver(line, maxBytes);
  if (over !== undefined) throw new FrameTooLargeError(method, over, maxBytes);
  return line;
}
