import { randomBytes } from 'node:crypto';
import {
  BATCH_TOO_LONG_MESSAGE,
  ErrorCode,
  JSONRPC_VERSION,
  dispatchOnce,
  parseFrame,
  serializeFrame,
  type Dispatcher,
  type ErrorObject,
  type RequestId,
  type TransportFrame,
} from '../../jsonrpc/index.js';
import { pastTheCap, sessionPastTheCapMessage, whenEvicted } from '../connection-limits.js';
import { responseOn } from '../response-on-socket.js';
import { sessionStream } from '../session-streams.js';
import { clientGone, refuse, type GatewayContext, type GatewayMiddleware } from '../context.js';
import { BUILDING_RETRY_AFTER_SECONDS, type CallableModule, type ModuleDirectory } from '../modules.js';
import { REQUEST_CANCELLED, TRANSPORT_ERROR, httpAnswerOf, moduleNotFoundMessage } from './errors.js';
import { checkLegacyPost, checkStreamGet, checkStreamablePost, type HeaderRefusal } from './headers.js';
import { CLIENT_WENT_AWAY, InflightCalls, STREAM_CLOSED } from './inflight-calls.js';
import { lonePostPeer, ssePeer, streamablePeer } from './peers.js';
import { mcpDispatcher } from './server.js';
import { MAX_REQUESTS_IN_FLIGHT, overCapAnswer, tooManyRequestsMessage } from './request-cap.js';
import { ssePipelinedMessage, sseSessionsFullMessage, type SseSessions } from './sse-sessions.js';

export interface McpSurfaceOptions {
  modules: ModuleDirectory;
  sessions: SseSessions;
  /** Hears failures no client should see in detail (a handler's crash). */
  onError: (err: unknown) => void;
}

/**
 * The MCP surface: Streamable HTTP on `/mcp/{module}` (stateless, every answer in its response as
 * `application/json`) and legacy HTTP+SSE on `/mcp/{module}/sse`, both feeding one Dispatcher per
 * module. An unknown module and a plugin without `mcp = true` look the same on every route and
 * method (404), so the module is looked up before anything else is checked.
 *
 * It routes itself (a prefix test and one split) rather than through a Router: it sits on the
 * `tools/call` hot path, and other paths go straight on with `next()`.
 */
export function mcpSurface(options: McpSurfaceOptions): GatewayMiddleware {
  const surfaces = new WeakMap<CallableModule, ServedSurface>();
  // One in-flight table per module name, not per instance: a cancel (or a closing stream) still
  // reaches a call running on an instance a reload swapped out, and one posted after the swap.
  const inflightByName = new Map<string, InflightCalls>();
  const served = (name: string): ServedSurface | undefined => {
    const module = options.modules.get?.(name);
    if (!module || !module.protocols.mcp) return undefined;
    let surface = surfaces.get(module);
    if (!surface) {
      const inflight = inflightByName.get(name) ?? new InflightCalls();
      inflightByName.set(name, inflight);
      surface = { dispatcher: mcpDispatcher(module, options.onError, inflight), inflight };
      surfaces.set(module, surface);
    }
    return surface;
  };

  const streamable = async (ctx: GatewayContext, name: string): Promise<void> => {
    const surface = served(name);
    if (!surface) return moduleNotServed(ctx, options.modules, name);
    if (ctx.method !== 'POST') return methodNotAllowed(ctx, 'POST');
    const refusal = checkStreamablePost(ctx.req.headers);
    if (refusal) return transportRefusal(ctx, refusal);
    const frame = parseFrame(bodyText(ctx));
    const session = ctx.get('mcp-session-id');
    const peer = session === '' ? lonePostPeer() : streamablePeer(session);
    noteCancellation(ctx, frame, surface.inflight, peer);
    // The client closing its connection before the answer is written cancels what it asked.
    const ids = requestIds(frame);
    if (ids.length > MAX_REQUESTS_IN_FLIGHT) {
      // A batch's entries all run at once: over the cap none of it runs, each request is answered the error.
      ctx.state.refusal = tooManyRequestsMessage('in one request body');
      ctx.type = 'application/json';
      ctx.body = serializeFrame(overCapAnswer(frame, ids, 'in one request body')!);
      return;
    }
    let gone = false;
    const onClose = (): void => {
      if (ctx.res.writableEnded) return;
      gone = true;
      for (const id of ids) surface.inflight.cancel(peer, id, CLIENT_WENT_AWAY);
    };
    if (ids.length > 0) {
      ctx.res.on('close', onClose); // on(), not once(): it is taken off below, and once() wraps it
      // Closed for a newcomer at the connection cap: its calls are cancelled and the answer says why.
      whenEvicted(ctx.res, (why) => {
        for (const id of ids) surface.inflight.cancel(peer, id, why);
      });
    }
    let answer: TransportFrame | undefined;
    try {
      answer = await dispatchOnce(surface.dispatcher, frame, { peer });
    } finally {
      if (ids.length > 0) ctx.res.off('close', onClose);
    }
    if (gone) {
      // Nobody is left to read an answer: the row says what happened.
      return clientGone(ctx, CLIENT_WENT_AWAY);
    }
    if (answer === undefined) return accepted(ctx);
    const error = answer.kind === 'message' && 'error' in answer.message ? answer.message.error : undefined;
    const http = error && httpAnswerOf(error);
    const status = http?.status ?? statusFor(error);
    if (http?.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(http.retryAfterSeconds));
    // A standalone error answered with an error status is a refusal row like the others: its reason is the error's message.
    if (error && status >= 400) ctx.state.refusal = error.message;
    if (error?.code === REQUEST_CANCELLED) ctx.state.refusal = `cancelled: ${error.message.replace(/^Request cancelled: /, '')}`;
    if (isInitialized(frame, answer)) ctx.set('Mcp-Session-Id', randomBytes(16).toString('hex'));
    respondJson(ctx, status, serializeFrame(answer));
  };

  const legacy = (ctx: GatewayContext, name: string): void => {
    const surface = served(name);
    const dispatcher = surface?.dispatcher;
    if (ctx.method === 'GET') {
      if (!dispatcher) return moduleNotServed(ctx, options.modules, name, () => refuse(ctx, 404, moduleNotFoundMessage(name)));
      const refusal = checkStreamGet(ctx.req.headers);
      if (refusal) return refuse(ctx, refusal.status, refusal.message);
      if (responseOn(ctx.req.socket) !== ctx.res) {
        // Read behind another request still unanswered on its connection: opened there, the stream
        // would hold every request read after it unanswered for as long as it lasts, and the rule
        // that closes a connection for those asks only the response on the socket, not one queued.
        return refuse(ctx, 400, ssePipelinedMessage(name));
      }
      if (pastTheCap(ctx.req.socket)) {
        // It could never be closed for a later newcomer: held there, it would keep newcomers out.
        ctx.set('Retry-After', '1');
        return refuse(ctx, 503, sessionPastTheCapMessage(name));
      }
      if (!options.sessions.makeRoomForSession()) return refuse(ctx, 503, sseSessionsFullMessage(name));
      ctx.status = 200;
      ctx.respond = false; // the stream outlives this middleware; the session writes to it
      const session = options.sessions.open(name, ctx.res);
      sessionStream(ctx.res); // never closed for a newcomer at the connection cap: its own cap and idle rule
      // The calls posted on the session are cancelled when its stream closes.
      ctx.res.once('close', () => surface!.inflight.cancelPeer(ssePeer(session.id), STREAM_CLOSED));
      return;
    }
    if (!dispatcher) return moduleNotServed(ctx, options.modules, name);
    if (ctx.method !== 'POST') return methodNotAllowed(ctx, 'GET, POST');
    const id = ctx.query.sessionId;
    if (typeof id !== 'string' || id === '') return refuse(ctx, 400, 'the sessionId query parameter is required');
    const session = options.sessions.get(id);
    if (!session || session.module !== name) return refuse(ctx, 404, `no open SSE session '${id}'`);
    session.lastMessageAt = performance.now(); // in use: not closed to let a new session in
    const refusal = checkLegacyPost(ctx.req.headers);
    if (refusal) return transportRefusal(ctx, refusal);
    const frame = parseFrame(bodyText(ctx));
    // A batch over the entry cap is refused on the POST itself (nothing goes on the stream): the
    // error cannot name a request, so only the POST's own answer reaches the client that sent it.
    if (frame.kind === 'malformed' && frame.reason === 'batch-too-long') return rpcRefusal(ctx, 400, ErrorCode.InvalidRequest, BATCH_TOO_LONG_MESSAGE, null);
    const peer = ssePeer(session.id);
    noteCancellation(ctx, frame, surface!.inflight, peer);
    // Notifications (a cancellation among them) are never refused: only requests count.
    const owed = requestIds(frame);
    if (session.callsInFlight + owed.length > MAX_REQUESTS_IN_FLIGHT) {
      // Refused at once on the stream; the POST is 202 as usual (the transport took it), its row says why.
      const refusal = overCapAnswer(frame, owed, 'on this SSE session');
      if (refusal) session.send(refusal);
      ctx.state.refusal = tooManyRequestsMessage('on this SSE session');
      return accepted(ctx);
    }
    session.callsInFlight += owed.length;
    // 202 at once; the answer (if one is owed) goes out on the stream when it is ready. A call
    // cancelled (notifications/cancelled, or the stream closed) is not answered, as MCP asks.
    const answered = dispatchOnce(dispatcher, frame, { peer }).then((answer) => {
      session.callsInFlight -= owed.length;
      if (answer !== undefined && !isCancelledAnswer(answer)) session.send(answer);
    });
    // The call holds its body past this 202: it stays counted among the bodies held until answered.
    const release = ctx.state.bodyHold?.();
    if (release) void answered.then(release, release);
    return accepted(ctx);
  };

  return async (ctx, next) => {
    const route = mcpRoute(ctx.path);
    if (route === undefined) return next();
    if (route.sse) legacy(ctx, route.module);
    else await streamable(ctx, route.module);
  };
}

/** `/mcp/{module}` or `/mcp/{module}/sse` (the name percent-decoded), or `undefined` for any other path. */
export function mcpRoute(path: string): { module: string; sse: boolean } | undefined {
  if (!path.startsWith('/mcp/')) return undefined;
  const rest = path.slice(5);
  const slash = rest.indexOf('/');
  const raw = slash < 0 ? rest : rest.slice(0, slash);
  if (raw === '' || (slash >= 0 && rest.slice(slash) !== '/sse')) return undefined;
  let module: string;
  try {
    module = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  return { module, sse: slash >= 0 };
}

/** One module's handlers and the calls running on them. */
interface ServedSurface {
  dispatcher: Dispatcher;
  inflight: InflightCalls;
}

/**
 * A body that is one `notifications/cancelled` for a call of this peer still running: its row
 * says which request it cancels (on the legacy transport, whose calls have no row of their own,
 * this is the only row that shows it).
 */
function noteCancellation(ctx: GatewayContext, frame: TransportFrame, inflight: InflightCalls, peer: string | undefined): void {
  if (frame.kind !== 'message' || !('method' in frame.message) || frame.message.method !== 'notifications/cancelled') return;
  const params = frame.message.params;
  const id = params !== undefined && !Array.isArray(params) ? params['requestId'] : undefined;
  if ((typeof id === 'string' || typeof id === 'number') && inflight.has(peer, id)) ctx.state.refusal = `cancelled request ${JSON.stringify(id)}`;
}

/** The ids of the requests in a body (a single request, or a batch's), whose answers this POST owes. */
function requestIds(frame: TransportFrame): RequestId[] {
  if (frame.kind === 'message') return 'method' in frame.message && 'id' in frame.message ? [frame.message.id] : [];
  if (frame.kind !== 'batch') return [];
  const ids: RequestId[] = [];
  for (const entry of frame.entries) {
    if (entry.kind === 'message' && 'method' in entry.message && 'id' in entry.message) ids.push(entry.message.id);
  }
  return ids;
}

/** A successful `initialize` answer: the Streamable HTTP response names a session (it only scopes cancellation). */
function isInitialized(frame: TransportFrame, answer: TransportFrame): boolean {
  return (
    frame.kind === 'message' && 'method' in frame.message && frame.message.method === 'initialize' &&
    answer.kind === 'message' && 'result' in answer.message
  );
}

function isCancelledAnswer(answer: TransportFrame): boolean {
  return answer.kind === 'message' && 'error' in answer.message && answer.message.error.code === REQUEST_CANCELLED;
}

function bodyText(ctx: GatewayContext): string {
  return ctx.state.rawBody?.toString('utf8') ?? '';
}

/**
 * The status of an answer whose error (a standalone one's) asked for none: a Parse error or
 * Invalid Request is a 400, anything else (a result, a batch) a 200. An error that asked for a
 * status (502, 503, 500: `httpAnswerOf`) keeps it.
 */
function statusFor(error: ErrorObject | undefined): number {
  return error !== undefined && (error.code === ErrorCode.ParseError || error.code === ErrorCode.InvalidRequest) ? 400 : 200;
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The answer written straight to Node's response, as Koa would write it (the same status, type
 * and length; headers set before, such as `Mcp-Session-Id`, kept), with Koa's respond step
 * skipped (`ctx.respond = false`): the `tools/call` path's one write, without the body setter's
 * type lookup and Koa's checks of a body it already knows is a string.
 */
function respondJson(ctx: GatewayContext, status: number, text: string): void {
  ctx.respond = false;
  // The body encoded once (its length is the buffer's); the headers as Node's flat [name, value, …]
  // list, which writeHead takes without walking an object's keys.
  const body = Buffer.from(text);
  ctx.res.writeHead(status, ['content-type', JSON_CONTENT_TYPE, 'content-length', String(body.length)]);
  ctx.res.end(body);
}

function accepted(ctx: GatewayContext): void {
  // Explicitly empty (Koa would otherwise write the status text); the body first, since Koa
  // turns a null body under a non-empty status into a 204.
  ctx.body = null;
  ctx.status = 202;
}

/**
 * A module with no surface: 503 with `Retry-After` while it is being built (the client may come
 * back), 503 with the reason when its build failed (nothing to wait for), 403 with the reason when
 * its capabilities are not granted (the reason says how to grant them), else 404.
 */
function moduleNotServed(ctx: GatewayContext, modules: ModuleDirectory, name: string, notFound = (): void => moduleNotFound(ctx, name)): void {
  const pending = modules.pending?.().find((m) => m.name === name);
  if (pending?.state === 'building') {
    ctx.set('Retry-After', String(BUILDING_RETRY_AFTER_SECONDS));
    return rpcRefusal(ctx, 503, TRANSPORT_ERROR, `Module '${name}' is being built; retry in ${BUILDING_RETRY_AFTER_SECONDS} s.`, requestIdOf(ctx));
  }
  if (pending?.state === 'failed') return rpcRefusal(ctx, 503, TRANSPORT_ERROR, `Module '${name}' failed to build: ${pending.reason ?? 'no reason given'}`, requestIdOf(ctx));
  if (pending?.state === 'ungranted') return rpcRefusal(ctx, 403, TRANSPORT_ERROR, `Module '${name}' is not served: ${pending.reason ?? 'its capabilities are not granted'}`, requestIdOf(ctx));
  notFound();
}

/** 404 as JSON-RPC -32602 `module '<m>' not found`, under the request's id when it has one. */
function moduleNotFound(ctx: GatewayContext, name: string): void {
  rpcRefusal(ctx, 404, ErrorCode.InvalidParams, moduleNotFoundMessage(name), requestIdOf(ctx));
}

function methodNotAllowed(ctx: GatewayContext, allow: string): void {
  ctx.set('Allow', allow);
  rpcRefusal(ctx, 405, TRANSPORT_ERROR, 'Method not allowed.', null);
}

function transportRefusal(ctx: GatewayContext, refusal: HeaderRefusal): void {
  rpcRefusal(ctx, refusal.status, TRANSPORT_ERROR, refusal.message, null);
}

function rpcRefusal(ctx: GatewayContext, status: number, code: number, message: string, id: RequestId | null): void {
  ctx.state.refusal = message;
  ctx.status = status;
  ctx.body = { jsonrpc: JSONRPC_VERSION, id, error: { code, message } };
}

function requestIdOf(ctx: GatewayContext): RequestId | null {
  const frame = parseFrame(bodyText(ctx));
  return frame.kind === 'message' && 'id' in frame.message && frame.message.id !== null ? frame.message.id : null;
}
