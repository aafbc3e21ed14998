import type { Readable } from 'node:stream';
import { MAX_REQUEST_BYTES } from '../../gateway/guards/body-limit.js';
import { FramingError, LineSplitter, LineTooLongError, parseFrame, type RequestId, type TransportFrame } from '../../jsonrpc/index.js';

/**
 * The longest line the bridge reads (newline excluded): the gateway's request body limit, 10 MiB.
 * A longer line could only be refused by the gateway (413), so it is refused here, never held whole.
 */
export const MAX_LINE_BYTES = MAX_REQUEST_BYTES;

/** What a line that cannot be read as text becomes: the relay answers it with Parse error. */
const UNREADABLE: TransportFrame = { kind: 'malformed', reason: 'parse', text: '' };

/** How much of a line's start is kept, to find the id of a line refused as too long. */
const HEAD_BYTES = 1024;

/**
 * One line of the client's, as read: its frame and its size in bytes, or a line over
 * `maxLineBytes`, dropped unread but for the id it begins with (`null` when it has none there).
 */
export type ReadLine = { kind: 'frame'; frame: TransportFrame; bytes: number } | { kind: 'too-long'; id: RequestId | null };

/**
 * The id of a request that begins with it, as SDKs write one (`{"jsonrpc":"2.0","id":7,…`): the
 * `id` member among the object's leading members whose values are plain (no object or array
 * before it). Anything else (a batch, an id after `params`) is null: the refusal then has id null.
 */
const LEADING_ID = /^\s*\{(?:\s*"(?:[^"\\]|\\.)*"\s*:\s*(?:"(?:[^"\\]|\\.)*"|[-+.\deE]+|true|false|null)\s*,)*?\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*[,}]/;

export function leadingId(head: string): RequestId | null {
  const match = LEADING_ID.exec(head);
  if (!match) return null;
  const id = JSON.parse(match[1]!) as unknown;
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : null;
}

/**
 * Reads newline-delimited JSON-RPC from the client, one frame per line, in order (main/jsonrpc's
 * LineSplitter and parseFrame), each with its size. Unlike the jsonrpc stream transport, which
 * fails the whole stream on a framing error, a line that is not UTF-8 is one unreadable frame
 * (answered -32700), and a line over `maxLineBytes` is dropped as it comes (only its first KiB is
 * kept, for its id) and told as `too-long`; reading goes on at the next line: a client must get an
 * answer per line. Resolves when the input ends or is destroyed; rejects with the stream's error.
 */
export function readFrames(input: Readable, onLine: (line: ReadLine) => void, maxLineBytes: number = MAX_LINE_BYTES): Promise<void> {
  let splitter = new LineSplitter(maxLineBytes);
  // After an over-long line, its remaining bytes up to the next newline are dropped unbuffered.
  let skipping = false;
  // The start of the line being read: the id of a line too long to read whole.
  let head: Buffer[] = [];
  let headBytes = 0;

  const take = (lines: () => string[], endsLine: boolean): void => {
    try {
      for (const line of lines()) onLine({ kind: 'frame', frame: parseFrame(line), bytes: Buffer.byteLength(line) });
    } catch (err) {
      if (!(err instanceof FramingError)) throw err;
      if (err instanceof LineTooLongError) onLine({ kind: 'too-long', id: leadingId(Buffer.concat(head).toString('utf8')) });
      else onLine({ kind: 'frame', frame: UNREADABLE, bytes: 0 });
      splitter = new LineSplitter(maxLineBytes);
      skipping = err instanceof LineTooLongError && !endsLine;
    }
  };
  // One line at a time, so a bad line cannot take the good lines of the same chunk with it.
  const segment = (bytes: Uint8Array, endsLine: boolean): void => {
    if (skipping) skipping = !endsLine;
    else {
      if (headBytes < HEAD_BYTES) {
        const part = Buffer.from(bytes.subarray(0, HEAD_BYTES - headBytes));
        head.push(part);
        headBytes += part.length;
      }
      take(() => splitter.push(bytes), endsLine);
    }
    // Each line's head is its own, whether it was read or skipped.
    if (endsLine) {
      head = [];
      headBytes = 0;
    }
  };

  return new Promise<void>((resolve, reject) => {
    const stop = (): void => {
      input.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    const onData = (chunk: Buffer | string): void => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      let from = 0;
      for (let newline = bytes.indexOf(0x0a); newline !== -1; newline = bytes.indexOf(0x0a, from)) {
        segment(bytes.subarray(from, newline + 1), true);
        from = newline + 1;
      }
      if (from < bytes.length) segment(bytes.subarray(from), false);
    };
    const onEnd = (): void => {
      stop();
      if (!skipping) take(() => splitter.end(), true);
      resolve();
    };
    const onError = (err: Error): void => {
      stop();
      reject(err);
    };
    const onClose = (): void => {
      stop();
      resolve();
    };
    input.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}
