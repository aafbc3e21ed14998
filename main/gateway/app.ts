import Koa from 'koa';
import Router from '@koa/router';
import type { RemoteModuleDirectory } from './a2a/cards.js';
import type { GatewayMiddleware, GatewayState } from './context.js';
import type { EdgeLog } from './edge/edge-log.js';
import { errorBoundary, notFound } from './errors.js';
import { requestGuards } from './guards/request-guards.js';
import { surfacesOf, type ModuleDirectory } from './modules.js';
import type { ReadingBodies } from './reading/reading-bodies.js';
import type { UnsentBytes } from './unsent/unsent-bytes.js';

export interface GatewayAppOptions {
  token: () => string;
  edgeLog: EdgeLog;
  /** Local modules (served over MCP) and remote ones (forwarded over A2A), for the index. */
  modules: ModuleDirectory & RemoteModuleDirectory;
  /** Where remote modules are forwarded (the runner's URL without credentials), if anywhere: for the index. */
  remoteRunner?: string | undefined;
  maxRequestBytes: number;
  /** The bytes of every request body still coming in, held under one cap. */
  readingBodies: ReadingBodies;
  /**
   * Every response's bytes not yet sent, held under one cap (its middleware goes first). Undefined
   * when the server's responses are the ledger's own class (`UnsentBytes.Response`), which counts them.
   */
  unsent: UnsentBytes | undefined;
  onError: (err: unknown) => void;
  /**
   * Surfaces that route themselves (a middleware that calls `next()` for paths it does not
   * serve), mounted right after the guards: the hot paths, spared a Router's matching.
   */
  handlers?: readonly GatewayMiddleware[];
}

/**
 * The gateway's Koa app. The guards run in this order (loopback Host/Origin 403, then the token
 * 401, then the body cap 413) on every route and on the fallback, before any handler.
 */
export function buildGatewayApp(options: GatewayAppOptions): Koa<GatewayState> {
  const app = new Koa<GatewayState>();
  app.proxy = false;
  app.silent = true;
  if (options.unsent) app.use(options.unsent.middleware());
  app.use(options.edgeLog.middleware());
  app.use(errorBoundary(options.onError));
  app.use(requestGuards(options.token, options.maxRequestBytes, options.readingBodies));
  for (const handler of options.handlers ?? []) app.use(handler);

  const index = new Router<GatewayState>();
  index.get('/', (ctx) => {
    const local = options.modules.list().map((m) => ({ name: m.name, version: m.version, description: m.description, surfaces: surfacesOf(m) }));
    // A remote module is served too: forwarded to the runner, or answered 503 while none is set.
    const remote = (options.modules.remoteModules?.() ?? []).map((m) => ({
      name: m.name,
      version: m.version,
      description: m.description,
      surfaces: [`/a2a/${m.name}`],
      remote: { executionMode: m.executionMode ?? 'remote', forwardedTo: options.remoteRunner ?? null },
    }));
    // A module still being built (or whose build failed) is listed too, with its state, so a
    // client knows it is coming (or why it is not).
    const pending = (options.modules.pending?.() ?? []).map((m) => ({ name: m.name, state: m.state, ...(m.reason !== undefined ? { reason: m.reason } : {}) }));
    ctx.body = { gateway: 'chatty-protocol-gateway', modules: [...local, ...remote, ...pending] };
  });
  app.use(index.routes());
  app.use(index.allowedMethods());
  app.use(notFound());
  return app;
}
