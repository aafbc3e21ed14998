import { clientGone, refuse, type GatewayContext } from '../context.js';
import type { ServerResponse } from 'node:http';
import { GrowingBody } from '../reading/growing-body.js';
import { MAX_READING_BODY_BYTES, type ReadingBodies } from '../reading/reading-bodies.js';

/** `MAX_REQUEST_BYTES`: 10 MiB. */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

export const BODY_TOO_LARGE = 'payload too large: request bodies are limited to 10 MiB';

export const BODIES_FULL = `service unavailable: the gateway holds ${MAX_READING_BODY_BYTES / 1024 / 1024} MiB of request bodies being sent or held by requests still running, and this one had gone longest without a byte or found no room; send it again`;

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
  const body = await readCapped(ctx.req, ctx.res, bodies, maxBytes, Number.isSafeInteger(Number(declared)) ? Number(declared) : undefined, (holdUntil) => (ctx.state.holdBodyUntil = holdUntil));
  if (body === LET_GO) {
    // Its bytes are dropped; the connection closes once this answer is sent (the rest of the body is never read).
    ctx.set('Retry-After', '1');
    ctx.set('Connection', 'close');
    refuse(ctx, 503, BODIES_FULL, `request bodies being sent or in use passed ${bodies.maxBytes} bytes together; this one had gone longest without a byte, or no other could be let go`);
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
/** The body was let go to make room for the others, or refused for want of room (`ReadingBodies`). */
const LET_GO = Symbol('let go');

/**
 * What a whole request body costs while its request runs with it: the bytes held, and its parsed
 * forms (the JSON-RPC message, for MCP the arguments' text as well) at about its length each.
 */
export const inUseCost = (body: GrowingBody): number => body.capacity + 2 * body.length;

/**
 * The whole body, `undefined` as soon as it passes `maxBytes` (the rest is drained and dropped),
 * `LET_GO` when `bodies` let it go or had no room for it (its bytes dropped, the rest too), or
 * `CLIENT_GONE` when the stream fails before it is whole (Node's `aborted`: the client left).
 * It counts in `bodies` while it comes (joined into one buffer, so what is counted is what it
 * costs however small its chunks) and, once whole, until its holders are done: its handler holds it, and
 * its parsed copies, until done (`ctx.state.holdBodyUntil`).
 */
function readCapped(
  req: NodeJS.ReadableStream & { complete?: boolean },
  res: ServerResponse,
  bodies: ReadingBodies,
  maxBytes: number,
  declared: number | undefined,
  onWhole: (holdUntil: (done: Promise<unknown>) => void) => void,
): Promise<Buffer | undefined | typeof CLIENT_GONE | typeof LET_GO> {
  return new Promise((resolve) => {
    const body = new GrowingBody(declared ?? maxBytes);
    const drop = (outcome: undefined | typeof LET_GO): void => {
      cleanup();
      body.clear();
      // Keep draining (and dropping) the rest so the keep-alive connection can serve again.
      req.on('data', discard);
      resolve(outcome);
    };
    const reading = bodies.begin('request', () => drop(LET_GO));
    const release = (): void => bodies.end(reading);
    // Whole, it counts until every holder is done: the handler (`requestGuards`), and work that
    // outlives the response (a legacy SSE call answered 202 first).
    let holders = 0;
    const holdUntil = (done: Promise<unknown>): void => {
      holders += 1;
      const after = (): void => {
        holders -= 1;
        if (holders === 0) release();
      };
      done.then(after, after);
    };
    const onData = (chunk: Buffer): void => {
      if (body.length + chunk.length > maxBytes) return drop(undefined);
      if (!bodies.holds(reading, body.capacityWith(chunk))) return;
      body.add(chunk);
    };
    const onEnd = (): void => {
      // No cleanup: an ended stream sends no more data, and a later error finds the promise settled.
      // Counted until its holders are done (`holdUntil`), as in use: never let go from now on.
      if (!bodies.inUse(reading, inUseCost(body))) return;
      onWhole(holdUntil);
      resolve(body.bytes());
    };
    const onError = (): void => {
      cleanup();
      resolve(CLIENT_GONE);
    };
    const cleanup = (): void => {
      release();
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
