import { clientGone, refuse, type GatewayContext } from '../context.js';
import { MAX_READING_BODY_BYTES, type ReadingBodies } from '../reading/reading-bodies.js';

/** `MAX_REQUEST_BYTES`: 10 MiB. */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

export const BODY_TOO_LARGE = 'payload too large: request bodies are limited to 10 MiB';

export const BODIES_FULL = `service unavailable: the gateway holds ${MAX_READING_BODY_BYTES / 1024 / 1024} MiB of request bodies being sent, and this one had gone longest without a byte; send it again`;

/**
 * Reads the body whole, up to the cap, into `ctx.state.rawBody`; false when the request was
 * answered instead (413, 503 when `bodies` let it go to make room for the others being read, or
 * the 499 row of a client gone). A declared length over the cap is
 * refused without reading; a chunked body is refused as soon as it passes the cap. Node drains
 * what is left after the response, so the keep-alive connection goes on serving.
 */
export async function readBodyWithin(ctx: GatewayContext, bodies: ReadingBodies, maxBytes: number = MAX_REQUEST_BYTES): Promise<boolean> {
  const declared = ctx.req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    refuse(ctx, 413, BODY_TOO_LARGE, `declared body of ${declared} bytes over ${maxBytes}`);
    return false;
  }
  const body = await readCapped(ctx.req, bodies, maxBytes);
  if (body === LET_GO) {
    // Its bytes are dropped; the connection closes once this answer is sent (the rest of the body is never read).
    ctx.set('Retry-After', '1');
    ctx.set('Connection', 'close');
    refuse(ctx, 503, BODIES_FULL, `request bodies being sent passed ${bodies.maxBytes} bytes together; this one had gone longest without a byte`);
    return false;
  }
  if (body === CLIENT_GONE) {
    // Nobody is left to answer, and nothing failed on our side: a row that says so, not a stack.
    clientGone(ctx, CLIENT_GONE_REASON);
    return false;
  }
  if (body === undefined) {
    refuse(ctx, 413, BODY_TOO_LARGE, `streamed body over ${maxBytes} bytes`);
    return false;
  }
  ctx.state.rawBody = body;
  return true;
}

const discard = (): void => {};

/** The request stream ended in an error before its body was whole: the client closed its connection. */
const CLIENT_GONE = Symbol('client gone');
const CLIENT_GONE_REASON = 'the client went away while sending its body';
/** The body was let go to make room for the others (`ReadingBodies`). */
const LET_GO = Symbol('let go');

/**
 * The whole body, `undefined` as soon as it passes `maxBytes` (the rest is drained and dropped),
 * `LET_GO` when `bodies` let it go to make room (its chunks dropped, the rest too), or
 * `CLIENT_GONE` when the stream fails before it is whole (Node's `aborted`: the client left).
 * Its chunks count in `bodies` until it settles.
 */
function readCapped(
  req: NodeJS.ReadableStream & { complete?: boolean },
  bodies: ReadingBodies,
  maxBytes: number,
): Promise<Buffer | undefined | typeof CLIENT_GONE | typeof LET_GO> {
  return new Promise((resolve) => {
    let chunks: Buffer[] = [];
    let size = 0;
    const drop = (outcome: undefined | typeof LET_GO): void => {
      cleanup();
      chunks = [];
      // Keep draining (and dropping) the rest so the keep-alive connection can serve again.
      req.on('data', discard);
      resolve(outcome);
    };
    const reading = bodies.begin(() => drop(LET_GO));
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) return drop(undefined);
      bodies.holds(reading, size);
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      // No cleanup: an ended stream sends no more data, and a later error finds the promise settled.
      bodies.end(reading);
      // A body that came in one chunk (most do) is that chunk, not a copy of it.
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (): void => {
      cleanup();
      resolve(CLIENT_GONE);
    };
    const cleanup = (): void => {
      bodies.end(reading);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
