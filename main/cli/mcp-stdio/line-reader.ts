import type { Readable } from 'node:stream';
import { DEFAULT_MAX_LINE_BYTES, FramingError, LineSplitter, LineTooLongError, parseFrame, type TransportFrame } from '../../jsonrpc/index.js';

/** What a line that cannot be read as text becomes: the relay answers it with Parse error. */
const UNREADABLE: TransportFrame = { kind: 'malformed', reason: 'parse', text: '' };

/**
 * Reads newline-delimited JSON-RPC from the client, one frame per line, in order (main/jsonrpc's
 * LineSplitter and parseFrame). Unlike the jsonrpc stream transport, which fails the whole stream
 * on a framing error, a line that is not UTF-8 or is over `maxLineBytes` is one unreadable frame
 * (answered -32700) and reading goes on at the next line: a client must get an answer per line.
 * Resolves when the input ends or is destroyed; rejects with the stream's error.
 */
export function readFrames(input: Readable, onFrame: (frame: TransportFrame) => void, maxLineBytes: number = DEFAULT_MAX_LINE_BYTES): Promise<void> {
  let splitter = new LineSplitter(maxLineBytes);
  // After an over-long line, its remaining bytes up to the next newline are dropped unbuffered.
  let skipping = false;

  const take = (lines: () => string[], endsLine: boolean): void => {
    try {
      for (const line of lines()) onFrame(parseFrame(line));
    } catch (err) {
      if (!(err instanceof FramingError)) throw err;
      onFrame(UNREADABLE);
      splitter = new LineSplitter(maxLineBytes);
      skipping = err instanceof LineTooLongError && !endsLine;
    }
  };
  // One line at a time, so a bad line cannot take the good lines of the same chunk with it.
  const segment = (bytes: Uint8Array, endsLine: boolean): void => {
    if (skipping) {
      skipping = !endsLine;
      return;
    }
    take(() => splitter.push(bytes), endsLine);
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
