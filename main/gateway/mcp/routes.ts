import {
  ErrorCode,
  JSONRPC_VERSION,
  dispatchOnce,
  parseFrame,
  serializeFrame,
  type Dispatcher,
  type RequestId,
  type TransportFrame,
} from '../../jsonrpc/index.js';
import { refuse, type GatewayContext, type GatewayMiddleware } from '../context.js';
import type { CallableModule, ModuleDirectory } from '../modules.js';
import { TRANSPORT_ERROR, moduleNotFoundMessage, statusOf } from './errors.js';
import { checkLegacyPost, checkStreamGet, checkStreamablePost, type HeaderRefusal } from './headers.js';
import { mcpDispatcher } from './server.js';
import type { SseSessions } from './sse-sessions.js';

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
  const dispatchers = new WeakMap<CallableModule, Dispatcher>();
  const served = (name: string): Dispatcher | undefined => {
    const module = options.modules.get?.(name);
    if (!module || !module.protocols.mcp) return undefined;
    let dispatcher = dispatchers.get(module);
    if (!dispatcher) {
      dispatcher = mcpDispatcher(module, options.onError);
      dispatchers.set(module, dispatcher);
    }
    return dispatcher;
  };

  const streamable = async (ctx: GatewayContext, name: string): Promise<void> => {
    const dispatcher = served(name);
    if (!dispatcher) return moduleNotFound(ctx, name);
    if (ctx.method !== 'POST') return methodNotAllowed(ctx, 'POST');
    const refusal = checkStreamablePost(ctx.req.headers);
    if (refusal) return transportRefusal(ctx, refusal);
    const answer = await dispatchOnce(dispatcher, parseFrame(bodyText(ctx)));
    if (answer === undefined) return accepted(ctx);
    ctx.status = statusFor(answer);
    // A standalone error answered with an error status is a refusal row like the others: its reason is the error's message.
    if (ctx.status >= 400 && answer.kind === 'message' && 'error' in answer.message) ctx.state.refusal = answer.message.error.message;
    ctx.type = 'application/json';
    ctx.body = serializeFrame(answer);
  };

  const legacy = (ctx: GatewayContext, name: string): void => {
    const dispatcher = served(name);
    if (ctx.method === 'GET') {
      if (!dispatcher) return refuse(ctx, 404, moduleNotFoundMessage(name));
      const refusal = checkStreamGet(ctx.req.headers);
      if (refusal) return refuse(ctx, refusal.status, refusal.message);
      ctx.status = 200;
      ctx.respond = false; // the stream outlives this middleware; the session writes to it
      options.sessions.open(name, ctx.res);
      return;
    }
    if (!dispatcher) return moduleNotFound(ctx, name);
    if (ctx.method !== 'POST') return methodNotAllowed(ctx, 'GET, POST');
    const id = ctx.query.sessionId;
    if (typeof id !== 'string' || id === '') return refuse(ctx, 400, 'the sessionId query parameter is required');
    const session = options.sessions.get(id);
    if (!session || session.module !== name) return refuse(ctx, 404, `no open SSE session '${id}'`);
    const refusal = checkLegacyPost(ctx.req.headers);
    if (refusal) return transportRefusal(ctx, refusal);
    // 202 at once; the answer (if one is owed) goes out on the stream when it is ready.
    void dispatchOnce(dispatcher, parseFrame(bodyText(ctx))).then((answer) => {
      if (answer !== undefined) session.send(answer);
    });
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

function bodyText(ctx: GatewayContext): string {
  return ctx.state.rawBody?.toString('utf8') ?? '';
}

/**
 * A standalone error answer keeps the status its error asked for (502, 500), a standalone
 * Parse error or Invalid Request is a 400, anything else (a batch included) is a 200.
 */
function statusFor(answer: TransportFrame): number {
  if (answer.kind !== 'message' || !('error' in answer.message)) return 200;
  const error = answer.message.error;
  const status = statusOf(error);
  if (status !== undefined) return status;
  return error.code === ErrorCode.ParseError || error.code === ErrorCode.InvalidRequest ? 400 : 200;
}

function accepted(ctx: GatewayContext): void {
  // Explicitly empty (Koa would otherwise write the status text); the body first, since Koa
  // turns a null body under a non-empty status into a 204.
  ctx.body = null;
  ctx.status = 202;
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
