import { TOO_DEEP_MESSAGE } from '../../jsonrpc/index.js';
import { refuse, type GatewayContext, type GatewayMiddleware } from '../context.js';
import { aggregatedCard, cardV03, cardV1, type ForwardedModule, type RemoteModuleDirectory } from './cards.js';
import { repeatedContentTypeParameter, repeatedSingleHeader, type RemoteRunner } from './forward.js';
import { anyRole, refuseRole, roleReached, type RoleDirectory } from './roles.js';
import {
  envelopesOf,
  malformedTaskIdsOf,
  requestIdOf,
  rpcBodyOf,
  rpcError,
  taskIdOfGet,
  INTERNAL_ERROR,
  INVALID_PARAMS,
  INVALID_REQUEST,
  MAX_BATCH_ITEMS,
  PARSE_ERROR,
  TRANSPORT_ERROR,
  type RpcBody,
  type RpcId,
  type RpcRequestEnvelope,
} from './wire.js';

export interface A2aSurfaceOptions {
  /** The remote modules (`ModuleRegistry.remote`/`remoteModules`). */
  modules: RemoteModuleDirectory;
  /** The broker: who is a role, which tasks local participants own. */
  roles: RoleDirectory;
  /** The configured remote runner, if any. */
  runner: RemoteRunner | undefined;
}

export const AGGREGATED_CARD_PATH = '/.well-known/agent.json';

/** `tasks/get` in both dialects: answered by the gateway itself for a name it does not forward. */
const TASK_GET_METHODS = new Set(['tasks/get', 'GetTask']);

export type A2aRoute =
  | { name: string; kind: 'rpc' }
  | { name: string; kind: 'card-v1' }
  | { name: string; kind: 'card-v03' }
  | { name: string; kind: 'other' };

/** `/a2a/{name}`, its two cards, or another path under it; `undefined` for any path outside `/a2a/{name}`. */
export function a2aRoute(path: string): A2aRoute | undefined {
  if (!path.startsWith('/a2a/')) return undefined;
  const rest = path.slice('/a2a/'.length);
  const slash = rest.indexOf('/');
  const raw = slash < 0 ? rest : rest.slice(0, slash);
  if (raw === '') return undefined;
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  const tail = slash < 0 ? '' : rest.slice(slash);
  if (tail === '') return { name, kind: 'rpc' };
  if (tail === '/.well-known/agent-card.json') return { name, kind: 'card-v1' };
  if (tail === '/.well-known/agent.json') return { name, kind: 'card-v03' };
  return { name, kind: 'other' };
}

/**
 * The A2A surface: modules whose manifest says they run remotely are forwarded to the remote
 * runner at `POST /a2a/{name}`, with a card for each dialect, and the gateway's aggregated card at
 * `/.well-known/agent.json`. Roles are never reached here: a role's name, a task a local
 * participant owns, and the aggregated card while any role exists are refused (403) before
 * anything else is looked at. Routes itself; other paths go on with `next()`.
 */
export function a2aSurface(options: A2aSurfaceOptions): GatewayMiddleware {
  const remote = (name: string): ForwardedModule | undefined => options.modules.remote?.(name);

  const aggregated = (ctx: GatewayContext): void => {
    const reason = anyRole(options.roles);
    if (reason !== undefined) return refuseRole(ctx, reason);
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return methodNotAllowed(ctx, 'GET');
    ctx.body = aggregatedCard(options.modules.remoteModules?.() ?? [], (name) => endpointOf(ctx, name));
  };

  const served = async (ctx: GatewayContext, route: A2aRoute): Promise<void> => {
    const body = ctx.method === 'POST' ? rpcBodyOf(ctx.state.rawBody) : undefined;
    const reason = roleReached(options.roles, route.name, body);
    if (reason !== undefined) return refuseRole(ctx, reason);
    if (body?.tooLong) return rpcRefusal(ctx, 400, INVALID_REQUEST, batchTooLongMessage(), null);
    if (body?.tooDeep) return rpcRefusal(ctx, 400, INVALID_REQUEST, TOO_DEEP_MESSAGE, null);
    const envelopes = envelopesOf(body);
    const id = requestIdOf(envelopes);
    const module = remote(route.name);
    if (!module) {
      const rpc = route.kind === 'rpc' && ctx.method === 'POST';
      if (rpc && body?.batch) return notForwardedBatch(ctx, route.name, body);
      const taskGet = rpc && envelopes.length === 1 ? envelopes[0] : undefined;
      if (taskGet && isTaskGet(taskGet)) return statelessTaskGet(ctx, taskGet);
      return moduleNotFound(ctx, route, id);
    }
    switch (route.kind) {
      case 'card-v1':
      case 'card-v03':
        if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return methodNotAllowed(ctx, 'GET');
        ctx.body = route.kind === 'card-v1' ? cardV1(module, endpointOf(ctx, module.name)) : cardV03(module, endpointOf(ctx, module.name));
        return;
      case 'other':
        return refuse(ctx, 404, `not found: ${ctx.method} ${ctx.path}`);
      case 'rpc':
        if (ctx.method !== 'POST') return methodNotAllowed(ctx, 'POST');
        if (!readsAsChecked(ctx, body, id)) return;
        if (!options.runner) return noRunner(ctx, module.name, id);
        return options.runner.forward(ctx, module.name, id);
    }
  };

  return async (ctx, next) => {
    if (ctx.path === AGGREGATED_CARD_PATH) return aggregated(ctx);
    const route = a2aRoute(ctx.path);
    if (route === undefined) return next();
    await served(ctx, route);
  };
}

/** The module's endpoint on this gateway, as the client reached it (its loopback Host, already checked). */
function endpointOf(ctx: GatewayContext, name: string): string {
  const host = ctx.get('host') || 'localhost';
  return `${ctx.protocol}://${host}/a2a/${encodeURIComponent(name)}`;
}

function isTaskGet(envelope: RpcRequestEnvelope): boolean {
  return envelope.method !== undefined && TASK_GET_METHODS.has(envelope.method);
}

/** The gateway keeps no tasks: a `tasks/get` (by `id`, or by the name `tasks/<id>`) finds none. */
function statelessTaskGetMessage(envelope: RpcRequestEnvelope): string {
  return `task '${taskIdOfGet(envelope)}' not found (stateless gateway)`;
}

function statelessTaskGet(ctx: GatewayContext, envelope: RpcRequestEnvelope): void {
  const message = statelessTaskGetMessage(envelope);
  ctx.state.refusal = message;
  ctx.status = 200;
  ctx.body = rpcError(envelope.id ?? null, INVALID_PARAMS, message);
}

/**
 * A JSON-RPC batch for a name that is not forwarded, answered as JSON-RPC 2.0 answers a batch: an
 * array with one answer per request that has an id (a `tasks/get` its stateless -32602, anything
 * else -32602 module not found, an item that is not a request object -32600), nothing for
 * notifications (no body at all when only notifications came), and the single -32600 error for an
 * empty batch. 200 when it held requests and each one is a `tasks/get`; else 404.
 */
function notForwardedBatch(ctx: GatewayContext, name: string, body: RpcBody): void {
  if (body.items.length === 0) return rpcRefusal(ctx, 404, INVALID_REQUEST, 'Invalid Request', null);
  const answers: ReturnType<typeof rpcError>[] = [];
  const reasons = new Set<string>();
  let onlyTaskGets = true;
  for (const item of body.items) {
    if (item === undefined || item.method === undefined) {
      onlyTaskGets = false;
      reasons.add('Invalid Request');
      answers.push(rpcError(null, INVALID_REQUEST, 'Invalid Request'));
      continue;
    }
    const taskGet = isTaskGet(item);
    if (!taskGet) onlyTaskGets = false;
    const message = taskGet ? statelessTaskGetMessage(item) : moduleNotFoundMessage(name);
    reasons.add(message);
    if (item.id !== undefined) answers.push(rpcError(item.id, INVALID_PARAMS, message));
  }
  ctx.state.refusal = [...reasons].join('; ');
  ctx.body = answers.length > 0 ? answers : null;
  ctx.status = onlyTaskGets ? (answers.length > 0 ? 200 : 204) : 404;
}

/**
 * Whether the runner will read the request as the role check read it; if not, it is refused here
 * (and `false` returned): a single header sent twice, on two lines or joined by a comma on one, or
 * a `Content-Type` parameter said twice (400), a charset other than UTF-8 (415), a
 * body that is not JSON (400 parse error), a task id that is not a string or a number (400
 * -32602, naming each such field).
 */
function readsAsChecked(ctx: GatewayContext, body: RpcBody | undefined, id: RpcId): body is RpcBody {
  const repeated = repeatedSingleHeader(ctx.req.rawHeaders);
  const parameter = repeatedContentTypeParameter(ctx.get('content-type') || undefined);
  if (repeated !== undefined) rpcRefusal(ctx, 400, INVALID_REQUEST, repeatedHeaderMessage(repeated), null);
  else if (parameter !== undefined) rpcRefusal(ctx, 400, INVALID_REQUEST, `Invalid Request: more than one ${parameter} in the Content-Type header`, null);
  else if (!isUtf8(ctx.request.charset)) rpcRefusal(ctx, 415, INVALID_REQUEST, notUtf8Message(ctx.request.charset), null);
  else if (body === undefined) rpcRefusal(ctx, 400, PARSE_ERROR, 'Parse error', null);
  else {
    const malformed = body.raw.flatMap(malformedTaskIdsOf);
    if (malformed.length === 0) return true;
    rpcRefusal(ctx, 400, INVALID_PARAMS, `Invalid params: ${malformed.join('; ')}`, id);
  }
  return false;
}

/**
 * Whether a request's `Content-Type` charset is UTF-8 (or absent). The runner's JSON body parser
 * decodes any `utf-*` charset it is told (UTF-16, UTF-7…), while the owned-task check reads the
 * body as UTF-8: a body the two read differently would slip past the check.
 */
function isUtf8(charset: string): boolean {
  return charset === '' || charset.toLowerCase() === 'utf-8' || charset.toLowerCase() === 'utf8';
}

export function notUtf8Message(charset: string): string {
  return `Invalid Request: the body must be UTF-8 JSON, not charset '${charset}'`;
}

export function repeatedHeaderMessage(header: string): string {
  return `Invalid Request: more than one ${header} header`;
}

export function batchTooLongMessage(): string {
  return `Invalid Request: a batch of more than ${MAX_BATCH_ITEMS} requests`;
}

export function moduleNotFoundMessage(name: string): string {
  return `module '${name}' not found`;
}

/** 404: POST as JSON-RPC -32602 (as MCP answers an unknown module), anything else `{"error":…}`. */
function moduleNotFound(ctx: GatewayContext, route: A2aRoute, id: RpcId): void {
  const message = moduleNotFoundMessage(route.name);
  if (route.kind === 'rpc' && ctx.method === 'POST') return rpcRefusal(ctx, 404, INVALID_PARAMS, message, id);
  refuse(ctx, 404, message);
}

export function noRunnerMessage(name: string): string {
  return `module '${name}' runs on a remote runner and none is configured (the gateway's remoteRunner option, or serve --remote-runner URL)`;
}

function noRunner(ctx: GatewayContext, name: string, id: RpcId): void {
  rpcRefusal(ctx, 503, INTERNAL_ERROR, noRunnerMessage(name), id);
}

function methodNotAllowed(ctx: GatewayContext, allow: string): void {
  ctx.set('Allow', allow);
  rpcRefusal(ctx, 405, TRANSPORT_ERROR, 'Method not allowed.', null);
}

function rpcRefusal(ctx: GatewayContext, status: number, code: number, message: string, id: RpcId): void {
  ctx.state.refusal = message;
  ctx.status = status;
  ctx.body = rpcError(id, code, message);
}
