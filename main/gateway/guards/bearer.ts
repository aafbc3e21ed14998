import { tokenMatches } from '../access/token.js';
import { refuse, type GatewayMiddleware } from '../context.js';

export const UNAUTHORIZED = "unauthorized: the gateway's launch token is required";

/** `Authorization: Bearer <token>`, the exact prefix, compared in constant time. */
export function bearerGuard(token: () => string): GatewayMiddleware {
  return async (ctx, next) => {
    const header = ctx.req.headers.authorization;
    const reason =
      header === undefined ? 'no Authorization header'
      : !header.startsWith('Bearer ') ? 'Authorization is not a Bearer credential'
      : !tokenMatches(header.slice('Bearer '.length), token()) ? 'wrong launch token'
      : undefined;
    if (reason !== undefined) {
      ctx.set('WWW-Authenticate', 'Bearer');
      return refuse(ctx, 401, UNAUTHORIZED, reason);
    }
    await next();
  };
}
