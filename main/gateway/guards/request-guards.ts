import { connectionAuthorised } from '../connection-limits.js';
import { pipelinedRefusal } from '../queued-responses.js';
import { responseOn } from '../response-on-socket.js';
import { refuseWith, type GatewayMiddleware } from '../context.js';
import { bearerRefusal } from './bearer.js';
import { readBodyWithin } from './body-limit.js';
import { loopbackRefusal } from './loopback.js';
import type { ReadingBodies } from '../reading/reading-bodies.js';

/**
 * Every guard, in its order, as one middleware: one loopback Host (400 for two) and Origin (403), then the launch token
 * (401), then the body cap (413, the body read whole; 503 when let go to make room for others' bodies, `ReadingBodies`). Each guard is a plain check in its own
 * file; running them from one function spares every request two of Koa's middleware steps (a
 * bound dispatch and two promises each), on the path every `tools/call` takes.
 */
export function requestGuards(token: () => string, maxBytes: number, bodies: ReadingBodies): GatewayMiddleware {
  return (ctx, next) => {
    const ahead = responseOn(ctx.req.socket);
    if (ahead !== undefined && ahead !== ctx.res) {
      // Pipelined behind another request on its connection: not run when it follows an SSE stream
      // or one request too many; its connection is closed, and those before it are told (their
      // calls cancelled), as for any connection that closes.
      const refused = pipelinedRefusal(ahead, ctx.res, ctx.req.socket);
      if (refused !== undefined) {
        ctx.state.refusal = refused.reason;
        ctx.status = refused.status;
        ctx.req.socket.destroy();
        return Promise.resolve();
      }
    }
    const headers = ctx.req.headers;
    const refusal = loopbackRefusal(headers, ctx.req.rawHeaders, ctx.req.url) ?? bearerRefusal(headers.authorization, token());
    if (refusal !== undefined) {
      refuseWith(ctx, refusal);
      return Promise.resolve();
    }
    // Its connection is now closed to make room at the connection cap only for a newcomer that
    // sent the token too, and only while this request has run longest (connection-limits.ts).
    connectionAuthorised(ctx.req);
    // One promise a request: settled when the handler's is, the body counted until then.
    return new Promise<void>((resolve, reject) => {
      readBodyWithin(ctx, bodies, maxBytes, (hold) => {
        if (hold === undefined) return resolve();
        // The body counts among the bodies held while the handler runs with it, then is dropped.
        const release = hold();
        const done = (): void => {
          ctx.state.rawBody = undefined;
          release();
        };
        next().then(
          () => {
            done();
            resolve();
          },
          (err: unknown) => {
            done();
            reject(err);
          },
        );
      });
    });
  };
}
