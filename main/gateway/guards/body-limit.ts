import { clientGone, refuse, type GatewayContext } from '../context.js';
import { GrowingBody } from '../reading/growing-body.js';
import { MAX_READING_BODY_BYTES, type ReadingBodies } from '../reading/reading-bodies.js';

/** `MAX_REQUEST_BYTES`: 10 MiB. */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

export const BODY_TOO_LARGE = 'payload too large: request bodies are limited to 10 MiB';

export const BODIES_FULL = `service unavailable: the gateway holds ${MAX_READING_BODY_BYTES / 1024 / 1024} MiB of request bodies being sent or held by requests still running, and this one had gone longest without a byte or found no room; send it again`;

/**
 * Reads the body whole, up to the cap, into `ctx.state.rawBody`, then calls `whenRead` once with
 * how long the body counts: a `hold` (call it before the handler runs, and the release it returns
 * once the handler is done), or undefined when the request was answered instead (413, 503 when
 * `bodies` let it go to make room for the others being read, or the 499 row of a client gone).
 * A declared length over the cap is refused without reading; a chunked body is refused as soon as
 * it passes the cap. Node drains what is left after the response, so the keep-alive connection
 * goes on serving. A callback, not a promise: the guard makes the one promise a request needs.
 */
export function readBodyWithin(ctx: GatewayContext, bodies: ReadingBodies, maxBytes: number, whenRead: (hold: BodyHold | undefined) => void): void {
  const declared = ctx.req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    refuse(ctx, 413, BODY_TOO_LARGE, `declared body of ${declared} bytes over ${maxBytes}`);
    return whenRead(undefined);
  }
  readCapped(ctx.req, bodies, maxBytes, Number.isSafeInteger(Number(declared)) ? Number(declared) : undefined, (body, hold) => {
    if (body === LET_GO) {
      // Its bytes are dropped; the connection closes once this answer is sent (the rest of the body is never read).
      ctx.set('Retry-After', '1');
      ctx.set('Connection', 'close');
      refuse(ctx, 503, BODIES_FULL, `request bodies being sent or in use passed ${bodies.maxBytes} bytes together; this one had gone longest without a byte, or no other could be let go`);
      return whenRead(undefined);
    }
    if (body === CLIENT_GONE) {
      // Nobody is left to answer, and nothing failed on our side: a row that says so, not a stack.
      clientGone(ctx, CLIENT_GONE_REASON);
      return whenRead(undefined);
    }
    if (body === undefined || hold === undefined) {
      refuse(ctx, 413, BODY_TOO_LARGE, `streamed body over ${maxBytes} bytes`);
      return whenRead(undefined);
    }
    ctx.state.rawBody = body;
    // Work that outlives the response (a legacy SSE call answered 202 first) holds it too.
    ctx.state.bodyHold = hold;
    whenRead(hold);
  });
}

/**
 * A whole body's hold: it counts among the bodies held (as in use) until every release returned
 * has been called (each at most once counts).
 */
export type BodyHold = () => () => void;

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
 * Calls `settled` once with the whole body, `undefined` as soon as it passes `maxBytes` (the rest
 * is drained and dropped), `LET_GO` when `bodies` let it go or had no room for it (its bytes
 * dropped, the rest too), or `CLIENT_GONE` when the stream fails before it is whole (Node's
 * `aborted`: the client left). It counts in `bodies` while it comes (joined into one buffer, so
 * what is counted is what it costs however small its chunks) and, once whole, until its holders
 * are done: whole, `settled` gets a `hold` (its handler holds it, and its parsed copies, until
 * done); with no holder taken it would count until the exchange's end, so the guard takes one at once.
 */
function readCapped(
  req: NodeJS.ReadableStream & { complete?: boolean },
  bodies: ReadingBodies,
  maxBytes: number,
  declared: number | undefined,
  settled: (outcome: Buffer | undefined | typeof CLIENT_GONE | typeof LET_GO, hold?: BodyHold) => void,
): void {
  const body = new GrowingBody(declared ?? maxBytes);
  let isSettled = false;
  const settle = (outcome: Buffer | undefined | typeof CLIENT_GONE | typeof LET_GO, whole?: BodyHold): void => {
    if (isSettled) return;
    isSettled = true;
    settled(outcome, whole);
  };
  const drop = (outcome: undefined | typeof LET_GO): void => {
    cleanup();
    body.clear();
    // Keep draining (and dropping) the rest so the keep-alive connection can serve again.
    req.on('data', discard);
    settle(outcome);
  };
  const reading = bodies.begin('request', () => drop(LET_GO));
  // Whole, it counts until every holder is done: the handler (`requestGuards`), and work that
  // outlives the response (a legacy SSE call answered 202 first).
  let holders = 0;
  const hold: BodyHold = () => {
    holders += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      holders -= 1;
      if (holders === 0) bodies.end(reading);
    };
  };
  const onData = (chunk: Buffer): void => {
    if (body.length + chunk.length > maxBytes) return drop(undefined);
    if (!bodies.holds(reading, body.capacityWith(chunk))) return;
    body.add(chunk);
  };
  const onEnd = (): void => {
    // No cleanup: an ended stream sends no more data, and a later error finds it settled.
    // Counted until its holders are done (`hold`), as in use: never let go from now on.
    if (!bodies.inUse(reading, inUseCost(body))) return;
    settle(body.bytes(), hold);
  };
  const onError = (): void => {
    if (isSettled) return; // whole and held: its holders end it
    cleanup();
    settle(CLIENT_GONE);
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
}
