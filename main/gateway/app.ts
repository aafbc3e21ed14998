import Koa from 'koa';
import Router from '@koa/router';
import type { GatewayMiddleware, GatewayState } from './context.js';
import type { EdgeLog } from './edge/edge-log.js';
import { errorBoundary, notFound } from './errors.js';
import { bearerGuard } from './guards/bearer.js';
import { bodyLimitGuard } from './guards/body-limit.js';
import { loopbackGuard } from './guards/loopback.js';
import { surfacesOf, type ModuleDirectory } from './modules.js';

export interface GatewayAppOptions {
  token: () => string;
  edgeLog: EdgeLog;
  modules: ModuleDirectory;
  maxRequestBytes: number;
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
  app.use(options.edgeLog.middleware());
  app.use(errorBoundary(options.onError));
  app.use(loopbackGuard());
  app.use(bearerGuard(options.token));
  app.use(bodyLimitGuard(options.maxRequestBytes));
  for (const handler of options.handlers ?? []) app.use(handler);

  const index = new Router<GatewayState>();
  index.get('/', (ctx) => {
    ctx.body = {
      gateway: 'chatty-protocol-gateway',
      modules: options.modules.list().map((m) => ({
        name: m.name,
        version: m.version,
        description: m.description,
        surfaces: surfacesOf(m),
      })),
    };
  });
  app.use(index.routes());
  app.use(index.allowedMethods());
  app.use(notFound());
  return app;
}
