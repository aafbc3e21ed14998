import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { capConnections } from '../connection-cap/index.js';
import { closeHeldBetweenRequests } from './between-requests.js';
import { responseOn } from './response-on-socket.js';
import { isSessionStream } from './session-streams.js';
import { answerUnknownExpectation } from './unknown-expectation.js';
import { DEFAULT_ANSWER_DRAIN } from './unsent/unsent-bytes.js';

/**
 * How long a client may take to send a request, and how many connections the gateway holds at
 * once. Node's defaults held a connection that sent nothing 89 s and a stalled body 329 s, with no
 * cap on how many: any local process could hold the gateway's file descriptors (which the broker
 * and the plugins need too) until honest clients were refused.
 */
export interface ConnectionLimits {
  /** The request line and headers must be whole within this (a connection that sends nothing included); else 408 and closed. */
  readonly headersTimeoutMs: number;
  /** The whole request, body included, must be in within this; else 408 and closed. Answers and SSE streams are not timed. */
  readonly requestTimeoutMs: number;
  /**
   * Connections held at once. Past it the oldest connection that has not yet sent an authorised
   * request is closed, unanswered; when every other one has, the oldest of them not running a
   * request (idle between requests, or its body not yet whole); when none is, the newcomer is
   * kept (16 at most past it) until it sends the token, and then the request that has run longest
   * goes (`NEWCOMER_RESERVE`).
   */
  readonly maxConnections: number;
  /**
   * The write deadline (`AnswerDrain`, unsent/unsent-bytes.ts): a connection with bytes written
   * and not taken must take `answerDrainMinBytes` (or all of them) every `answerDrainWindowMs`,
   * else it is closed. Every response alike: answers, SSE streams, refusals.
   */
  readonly answerDrainWindowMs: number;
  readonly answerDrainMinBytes: number;
  /**
   * At the cap, a newcomer that sent the token closes first a running request of a connection that
   * is itself past the cap (a newcomer before it that has not yet taken a place within it); a
   * request of an established connection (one within the cap) at most once in this long
   * (`longestRunning`).
   */
  readonly establishedCancelIntervalMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  maxConnections: 512,
  answerDrainWindowMs: DEFAULT_ANSWER_DRAIN.windowMs,
  answerDrainMinBytes: DEFAULT_ANSWER_DRAIN.minBytes,
  establishedCancelIntervalMs: 10_000,
};

/** Connections that have sent a request with the launch token: closed to make room only when spent, or for a newcomer with the token (`longestRunning`). */
const authorised = new WeakSet<Socket>();
/** Newcomers kept past the cap until they send a request with the token (`Preemption`): what to call then. */
const waitingForToken = new WeakMap<Socket, () => void>();
/** When each authorised request began, as a count: which has run longest is all that is asked. */
const requestBegan = new WeakMap<IncomingMessage, number>();
let requests = 0;

/**
 * Called by the token guard for each authorised request (a WeakSet add and a WeakMap set: tens of
 * nanoseconds). A newcomer kept past the cap makes room now (`Preemption`).
 */
export function connectionAuthorised(req: IncomingMessage): void {
  requestBegan.set(req, ++requests);
  const socket = req.socket;
  if (authorised.has(socket)) return;
  authorised.add(socket);
  const proven = waitingForToken.get(socket);
  if (proven === undefined) return;
  waitingForToken.delete(socket);
  proven();
}

/** Each connection's server's connections past the cap (`capConnections`), for `pastTheCap`. */
const pastCapOf = new WeakMap<Socket, ReadonlySet<Socket>>();

/**
 * True while `socket` is one of the newcomers kept past the cap (no room was made for it yet).
 * What runs there must be a request a later newcomer may cancel: a legacy SSE session (never
 * cancelled for a newcomer) is refused there, else a token holder's sessions held the 16 places
 * past the cap, every later newcomer was closed at its arrival, and with every slot running a
 * call nobody else got in.
 */
export function pastTheCap(socket: Socket): boolean {
  return pastCapOf.get(socket)?.has(socket) === true;
}

/** What a legacy SSE session asked past the cap is answered (503, `Retry-After: 1`). */
export function sessionPastTheCapMessage(module: string): string {
  return `every connection of the gateway is running a request: an SSE session is not opened on a connection past its cap; try again shortly, or use Streamable HTTP (POST /mcp/${module})`;
}

/** How many newcomers are kept past the cap, waiting to send the token, while every slot runs a request. */
export const NEWCOMER_RESERVE = 16;

/**
 * The HTTP server with the limits applied; a request without Host (not a browser's) is served, which Node would answer 400.
 * `Response` is the class of its responses (the unsent-bytes ledger's, which counts their writes).
 */
export function limitedServer(
  limits: Partial<ConnectionLimits> | undefined,
  listener: RequestListener,
  Response?: typeof ServerResponse<IncomingMessage>,
): Server {
  const { headersTimeoutMs, requestTimeoutMs, maxConnections, establishedCancelIntervalMs } = { ...DEFAULT_CONNECTION_LIMITS, ...limits };
  // How often Node looks for connections past their time (its default, 30 s, would add that much to each).
  const lookEveryMs = Math.min(1_000, Math.max(50, Math.floor(headersTimeoutMs / 4)));
  const server = createServer(
    {
      requireHostHeader: false,
      ...(Response ? { ServerResponse: Response } : {}),
      headersTimeout: headersTimeoutMs,
      requestTimeout: Math.max(requestTimeoutMs, headersTimeoutMs),
      connectionsCheckingInterval: lookEveryMs,
    },
    // A request Node read after its connection was closed (it parses the rest of the read it is
    // in, a closed connection or not) runs nothing: nobody can read its answer. Before, the
    // requests pipelined past the 17th on a connection each went through the app after it was
    // closed, refused 429 again with a row of their own (3,624 of 64 KiB of `GET /` without the
    // token, ~0.6 s of the main thread). One field read a request.
    (req, res) => {
      if (!req.socket.destroyed) listener(req, res);
    },
  );
  // Node answers an `Expect` it does not know itself, past the guards: here, under their rules too.
  server.on('checkExpectation', answerUnknownExpectation);
  // Room is made by closing the oldest connection not yet authorised, else the oldest authorised
  // one that runs no request (the shared rule: `capConnections`), else a running request: a
  // newcomer's first (one still past the cap: a newcomer takes a place within it as soon as one
  // within it goes), an established connection's at most once an interval (none: the newcomer
  // stays past the cap, within the reserve).
  let establishedCancelledAt = -Infinity;
  const { open, pastCap } = capConnections(server, maxConnections, (socket) => authorised.has(socket), runsNoRequest, {
    reserve: NEWCOMER_RESERVE,
    whenProven: (socket, proven) => waitingForToken.set(socket, proven),
    victim: (open, newcomer, pastCap) => {
      const newcomers = longestRunning(pastCap, newcomer);
      if (newcomers !== undefined) return newcomers;
      const now = performance.now();
      if (now - establishedCancelledAt < establishedCancelIntervalMs) return undefined;
      const established = longestRunning(open, newcomer);
      if (established !== undefined) establishedCancelledAt = now;
      return established;
    },
    evict: (socket) => evict(socket, evictedMessage(maxConnections)),
  });
  server.on('connection', (socket: Socket) => pastCapOf.set(socket, pastCap));
  // Node's header timeout never starts for a kept-alive connection sending only empty lines.
  closeHeldBetweenRequests(server, open, headersTimeoutMs, lookEveryMs);
  return server;
}

/** What a request closed for a newcomer is told (its call's -32800 answer says it). */
export function evictedMessage(maxConnections: number): string {
  return `the gateway closed this connection for another client: all ${maxConnections} of its connections were running requests; call again`;
}

/**
 * How each running request is told it is closed for a newcomer, set by its route (`whenEvicted`):
 * a property of the response, not a WeakMap entry. The route's `cancel` reaches the response (through
 * the request's context), and V8's young-generation collector keeps a WeakMap's values alive whatever
 * their keys: an entry whose value leads back to its key is freed only by a full collection. As a
 * WeakMap, every call's whole request (its Koa context, request, response, body) was promoted to the
 * old generation (issue 21: 12-19 µs of main-thread GC a request at concurrency 32, against ~2).
 */
const EVICTION = Symbol('eviction');
type EvictableResponse = ServerResponse & { [EVICTION]?: ((why: string) => void) | undefined };

/**
 * Called by a route for a request it can end with a word (a Streamable HTTP POST's calls): if its
 * connection is closed for a newcomer, `cancel` is called with why, and the route answers that
 * (with `Connection: close`) instead of its client reading a dropped connection.
 */
export function whenEvicted(res: ServerResponse, cancel: (why: string) => void): void {
  (res as EvictableResponse)[EVICTION] = cancel;
}

/** How long an evicted request has to write its answer before its connection is destroyed (a module slow to honour the abort). */
export const EVICTION_GRACE_MS = 2_000;

/**
 * Closes `socket`, whose request is closed for a newcomer: through its route when it has one and
 * nothing of its answer is sent yet (the call cancelled with `why`, its answer says so, then the
 * connection closes), else at once.
 */
function evict(socket: Socket, why: string): void {
  const res = responseOn(socket);
  const cancel = res !== undefined && !res.headersSent ? (res as EvictableResponse)[EVICTION] : undefined;
  if (res === undefined || cancel === undefined) {
    socket.destroy();
    return;
  }
  (res as EvictableResponse)[EVICTION] = undefined;
  res.setHeader('Connection', 'close');
  cancel(why);
  setTimeout(() => socket.destroy(), EVICTION_GRACE_MS).unref();
}

/**
 * An authorised connection whose closing loses no work: idle between requests (a keep-alive
 * client opens another), or its request's body not yet whole (nothing of it has run: sent again,
 * as a body the ledger lets go is). Without this a token holder held every slot, with slow bodies
 * renewed at each request timeout or idle connections pinged every few seconds, and every other
 * client was closed unanswered. A request running, a stream, or an answer not yet sent whole
 * (the unsent-bytes ledger's and the write deadline's to bound) is not spent: closed only for a
 * newcomer that sends the token (`longestRunning`).
 */
function runsNoRequest(socket: Socket): boolean {
  const res = responseOn(socket);
  return res === undefined || !res.req.complete;
}

/**
 * The connection among `among` whose request has run longest (its response, the one on
 * the socket, begun first), for a newcomer that sent the token while every slot runs one: that
 * request is cancelled, the newcomer served. By the request's age, not the connection's: an
 * honest client's kept-alive connection is old, its calls short; and by the response on the
 * socket, so requests pipelined behind an old one do not make its connection look young. A
 * legacy SSE session (`sessionStream`: its own cap of 64 and idle rule) is never chosen; a
 * relayed A2A stream (a runner's long task) has neither, and is a running request like a call.
 */
function longestRunning(among: ReadonlySet<Socket>, newcomer: Socket): Socket | undefined {
  let chosen: Socket | undefined;
  let began = Infinity;
  for (const socket of among) {
    if (socket === newcomer) continue;
    const res = responseOn(socket);
    if (res === undefined || isSessionStream(res)) continue;
    const at = requestBegan.get(res.req) ?? 0;
    if (at < began) {
      chosen = socket;
      began = at;
    }
  }
  return chosen;
}

