import { Readable, Writable } from 'node:stream';
import { streamTransport, type TransportFrame } from '../../jsonrpc/index.js';
import { ClientGone, type McpRelay } from './relay.js';

/** Frames read ahead of the one being relayed before stdin is paused: a flood waits in the pipe. */
const READ_AHEAD = 64;

export interface StdioLoopOptions {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream;
  readonly report: (line: string) => void;
  /** Builds the relay around the function that writes to the client. */
  readonly relay: (write: (frame: TransportFrame) => Promise<void>) => McpRelay;
}

/**
 * Newline-delimited JSON-RPC on stdin/stdout (main/jsonrpc's stream transport), relayed one frame
 * at a time in arrival order: each answer is written before the next line is sent on, so answers
 * come back in request order. When stdin ends, what was read is still relayed, then stdout ends
 * and the loop resolves to 0. A framing failure (a line over 33 MiB or not UTF-8) leaves nothing
 * readable: it is reported and the loop resolves to 1, as it does when stdout is gone.
 */
export async function runStdioLoop(options: StdioLoopOptions): Promise<number> {
  const stdin = asReadable(options.stdin);
  const transport = streamTransport(stdin, asWritable(options.stdout));
  const relay = options.relay((frame) => transport.send(frame));

  let queued = 0;
  let tail = Promise.resolve();
  let clientGone = false;
  const onFrame = (frame: TransportFrame): void => {
    if (++queued >= READ_AHEAD) stdin.pause();
    tail = tail
      .then(() => (clientGone ? undefined : relay.relay(frame)))
      .catch((err: unknown) => {
        // Only a failed write to the client gets here: nobody is left to answer, so stop reading.
        clientGone = true;
        options.report(err instanceof ClientGone ? err.message : `mcp-stdio: ${String(err)}`);
        transport.close();
      })
      .finally(() => {
        if (--queued < READ_AHEAD && stdin.isPaused() && !stdin.readableEnded) stdin.resume();
      });
  };

  let code = 0;
  try {
    await transport.start(onFrame);
  } catch (err) {
    options.report(`mcp-stdio: stdin: ${err instanceof Error ? err.message : String(err)}`);
    code = 1;
  }
  await tail;
  if (clientGone) return 1;
  await transport.end();
  return code;
}

function asReadable(stream: NodeJS.ReadableStream): Readable {
  if (stream instanceof Readable) return stream;
  throw new TypeError('mcp-stdio: stdin must be a Node Readable stream');
}

function asWritable(stream: NodeJS.WritableStream): Writable {
  if (stream instanceof Writable) return stream;
  throw new TypeError('mcp-stdio: stdout must be a Node Writable stream');
}
