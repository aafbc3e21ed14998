import type Koa from 'koa';
import type { BodyHold } from './guards/body-limit.js';

/** What the guards leave on `ctx.state` for the handlers and the edge log. */
export interface GatewayState {
  /** Why the request was refused, for the edge log's refusal row. */
  refusal?: string;
  /** The request body, read whole by the body-cap guard (at most `MAX_REQUEST_BYTES`). */
  rawBody?: Buffer;
  /**
   * Keeps the body counted among the bodies held (`ReadingBodies`) until the release it returns is
   * called, not only until the handler is done: for a request whose work outlives its response (a
   * legacy SSE POST, answered 202 before its call runs, the call holding the body and its parsed
   * copies). The body's own hold, not a closure made for each request around it: one more closure a
   * request here was enough for V8 to make the request's objects straight in the old generation at
   * concurrency 32 (issue 21).
   */
  bodyHold?: BodyHold;
}

export type GatewayContext = Koa.ParameterizedContext<GatewayState>;
export type GatewayMiddleware = Koa.Middleware<GatewayState>;

/** What a guard decided against a request: the status, the body's error, the edge log's reason, and a header to send. */
export interface GuardRefusal {
  readonly status: number;
  readonly error: string;
  readonly reason: string;
  readonly header?: readonly [name: string, value: string];
}

/** Ends the request with a guard's refusal. */
export function refuseWith(ctx: GatewayContext, refusal: GuardRefusal): void {
  if (refusal.header) ctx.set(refusal.header[0], refusal.header[1]);
  refuse(ctx, refusal.status, refusal.error, refusal.reason);
}

/** Ends the request with a JSON refusal; the reason goes to the edge log, never to the body. */
export function refuse(ctx: GatewayContext, status: number, error: string, reason: string = error): void {
  ctx.state.refusal = reason;
  ctx.status = status;
  ctx.body = { error };
}

/** The client went away before its answer: no body, and a 499 row (as nginx logs it) saying what happened. */
export function clientGone(ctx: GatewayContext, reason: string): void {
  ctx.state.refusal = `cancelled: ${reason}`;
  ctx.body = null; // before the status: Koa turns a null body set after it into a 204
  ctx.status = 499;
}
