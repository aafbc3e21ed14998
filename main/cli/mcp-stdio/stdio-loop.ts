import { Readable, Writable } from 'node:stream';
import { serializeFrame, type TransportFrame } from '../../jsonrpc/index.js';
import { InFlight } from './in-flight.js';
import { readFrames } from './line-reader.js';
import type { McpRelay } from './relay.js';

export interface StdioLoopOptions {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream;
  readonly report: (line: string) => void;
  /** Builds the relay around the function that writes to the client. */
  readonly relay: (write: (frame: TransportFrame) => Promise<void>) => McpRelay;
  /** The client has gone: drop the calls still in flight (the gateway cancels a call whose connection closes). */
  readonly abandon?: () => void;
}

/**
 * Newline-delimited JSON-RPC on stdin/stdout, each line relayed as it is read, concurrently and
 * bounded (`InFlight`); each answer is written as one line when it comes. When stdin ends, what
 * was read is still relayed and answered, then stdout ends and the loop resolves to 0. It
 * resolves to 1 when stdin fails or stdout is gone (the client left: nobody to answer, so the
 * calls in flight are abandoned rather than waited for).
 */
export async function runStdioLoop(options: StdioLoopOptions): Promise<number> {
  const stdin = asReadable(options.stdin);
  const stdout = asWritable(options.stdout);
  // A write to a client that has left fails with EPIPE; the write's callback reports it, and an
  // unheard 'error' event would crash the process.
  stdout.on('error', () => {});
  const inFlight = new InFlight({
    relay: options.relay((frame) => {
      let line: string;
      try {
        line = `${serializeFrame(frame)}\n`;
      } catch (err) {
        // An answer nested too deeply to re-encode is not a closed stdout: it alone is dropped, said on stderr.
        options.report(`mcp-stdio: an answer could not be encoded, dropped: ${err instanceof Error ? err.message : String(err)}`);
        return Promise.resolve();
      }
      return writeLine(stdout, line);
    }),
    pause: () => stdin.pause(),
    resume: () => {
      if (stdin.isPaused() && !stdin.destroyed) stdin.resume();
    },
    report: options.report,
    clientGone: (err) => {
      options.report(err instanceof Error ? err.message : `mcp-stdio: ${String(err)}`);
      stdin.destroy();
      options.abandon?.();
    },
  });

  let code = 0;
  try {
    await readFrames(stdin, (line) => inFlight.take(line));
  } catch (err) {
    options.report(`mcp-stdio: stdin: ${err instanceof Error ? err.message : String(err)}`);
    code = 1;
  }
  await inFlight.drained();
  if (inFlight.clientHasGone) return 1;
  await endOutput(stdout);
  return code;
}

function writeLine(stdout: Writable, line: string): Promise<void> {
  if (stdout.destroyed || stdout.writableEnded) return Promise.reject(new Error('stdout is closed'));
  return new Promise((resolve, reject) => stdout.write(line, (err) => (err ? reject(err) : resolve())));
}

function endOutput(stdout: Writable): Promise<void> {
  if (stdout.destroyed || stdout.writableEnded) return Promise.resolve();
  return new Promise((resolve) => stdout.end(() => resolve()));
}

function asReadable(stream: NodeJS.ReadableStream): Readable {
  if (stream instanceof Readable) return stream;
  throw new TypeError('mcp-stdio: stdin must be a Node Readable stream');
}

function asWritable(stream: NodeJS.WritableStream): Writable {
  if (stream instanceof Writable) return stream;
  throw new TypeError('mcp-stdio: stdout must be a Node Writable stream');
}
