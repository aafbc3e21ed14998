import type { GatewayMiddleware } from './context.js';

/**
 * The one error path (Koa's habit): whatever a handler throws becomes a JSON body. A status from
 * `ctx.throw` is kept and its message shown only when `expose` is set; anything else is a 500
 * whose detail stays in the log.
 */
export function errorBoundary(onError: (err: unknown) => void): GatewayMiddleware {
  // A plain function over next()'s promise (Koa's compose turns a synchronous throw into a rejection).
  return (ctx, next) =>
    next().catch((err: unknown) => {
      const e = err as { status?: unknown; expose?: unknown; message?: unknown };
      const status = typeof e.status === 'number' && e.status >= 400 && e.status < 600 ? e.status : 500;
      const shown = e.expose === true && typeof e.message === 'string' ? e.message : status === 500 ? 'internal error' : 'request failed';
      ctx.state.refusal ??= status >= 500 ? 'handler failed' : shown;
      ctx.status = status;
      ctx.body = { error: shown };
      if (status >= 500) onError(err);
    });
}

/** Unknown routes: a JSON 404 after every guard has passed. */
export function notFound(): GatewayMiddleware {
  return async (ctx) => {
    ctx.status = 404;
    ctx.body = { error: `not found: ${ctx.method} ${ctx.path}` };
  };
}
