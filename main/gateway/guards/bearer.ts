import { tokenMatches } from '../access/token.js';
import type { GuardRefusal } from '../context.js';

export const UNAUTHORIZED = "unauthorized: the gateway's launch token is required";

/** `Authorization: Bearer <token>`, the exact prefix, compared in constant time. */
export function bearerRefusal(authorization: string | undefined, token: string): GuardRefusal | undefined {
  const reason =
    authorization === undefined ? 'no Authorization header'
    : !authorization.startsWith('Bearer ') ? 'Authorization is not a Bearer credential'
    : !tokenMatches(authorization.slice('Bearer '.length), token) ? 'wrong launch token'
    : undefined;
  return reason === undefined ? undefined : { status: 401, error: UNAUTHORIZED, reason, header: ['WWW-Authenticate', 'Bearer'] };
}
