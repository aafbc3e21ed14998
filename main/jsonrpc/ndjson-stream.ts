import { finished, type Readable, type Writable } from 'node:stream';
import { ConnectionClosedError } from './errors.js';
import { parseFrame, serializeFrame, type TransportFrame } from './frame.js';
import { FramingError, LineSplitter } from './line-splitter.js';
import type { FrameTransport } from './transport.js';

/** The default line cap: 33 MiB, newline excluded (the largest frame a worker connection takes). */
export const DEFAULT_MAX_LINE_BYTES = 33 * 1024 * 1024;

export interface StreamTransportOptions {
  readonly maxLineBytes?: number;
}

/**
 * Newline-delimited JSON over a byte stream pair (stdio, a socket, a socketpair fd): one frame
 * per line each way. The only file here that touches Node streams.
 */
export function streamTransport(input: Readable, output: Writable, options: StreamTransportOptions = {}): FrameTransport {
  return new NdjsonStreamTransport(input, output, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
}

/** The same over one Duplex (a `net.Socket`). A socket that should answer after its peer's FIN needs `allowHalfOpen`. */
export function duplexTransport(stream: Readable & Writable, options: StreamTransportOptions = {}): FrameTransport {
  return streamTransport(stream, stream, options);
}

class NdjsonStreamTransport implements FrameTransport {
  private closed = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly maxLineBytes: number,
  ) {
    // A stream may still emit 'error' after `start` settled (a write to a peer that left): the
    // failure already reached `start` or `send`, and an unheard 'error' would crash the process.
    for (const stream of this.streams()) stream.on('error', ignore);
  }

  start(onFrame: (frame: TransportFrame) => void): Promise<void> {
    const { input } = this;
    const splitter = new LineSplitter(this.maxLineBytes);
    return new Promise<void>((resolve, reject) => {
      const stop = () => {
        input.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      };
      const deliver = (lines: () => string[]) => {
        try {
          for (const line of lines()) onFrame(parseFrame(line));
          return true;
        } catch (error) {
          stop();
          this.close();
          reject(error);
          return false;
        }
      };
      const onData = (chunk: Buffer | string) => deliver(() => splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
      const onEnd = () => {
        if (deliver(() => splitter.end())) (stop(), resolve());
      };
      const onError = (error: Error) => (stop(), reject(error));
      // Destroyed without an 'end' (our own close, or the peer vanished without an error).
      const onClose = () => (stop(), resolve());
      input.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
    });
  }

  send(frame: TransportFrame): Promise<void> {
    const { output } = this;
    if (this.closed || output.writableEnded || output.destroyed) return Promise.reject(new ConnectionClosedError());
    let line: string;
    try {
      line = toLine(frame);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => output.write(line, (error) => (error ? reject(error) : resolve())));
  }

  end(): Promise<void> {
    const { output } = this;
    if (output.writableEnded || output.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      finished(output, { readable: false }, () => resolve());
      output.end();
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const stream of this.streams()) stream.destroy();
  }

  private streams(): Set<Readable | Writable> {
    return new Set<Readable | Writable>([this.input, this.output]);
  }
}

function ignore(): void {}

/**
 * One frame as one line. Serialised JSON never holds a raw newline; a malformed frame's original
 * text might, and then only a JSON value can be re-encoded onto one line.
 */
function toLine(frame: TransportFrame): string {
  const text = serializeFrame(frame);
  if (!text.includes('\n')) return `${text}\n`;
  if (frame.kind === 'malformed' && frame.reason === 'shape') return `${JSON.stringify(frame.value)}\n`;
  throw new FramingError('jsonrpc: a malformed frame that spans lines cannot be written as one line');
}
