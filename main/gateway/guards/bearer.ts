import { tokenMatches } from '../access/token.js';
import type { GuardRefusal } from '../context.js';

export const UNAUTHORIZED = "unauthorized: the gateway's launch token is required";

/**
 * `Authorization: Bearer <token>`: the scheme in any case and one or more spaces before the token
 * (an auth-scheme is case-insensitive, RFC 9110 §11.1; RFC 6750 allows 1*SP), the token compared in
 * constant time. The 401 says why, as the edge log does: the person who wrote the header can fix it.
 */
const BEARER = /^bearer +/i;

export function bearerRefusal(authorization: string | undefined, token: string): GuardRefusal | undefined {
  const scheme = authorization === undefined ? undefined : BEARER.exec(authorization);
  const reason =
    authorization === undefined ? 'no Authorization header'
    : scheme === null || scheme === undefined ? 'Authorization is not a Bearer credential'
    : !tokenMatches(authorization.slice(scheme[0].length), token) ? 'wrong launch token'
    : undefined;
  return reason === undefined ? undefined : { status: 401, error: `${UNAUTHORIZED} (${reason})`, reason, header: ['WWW-Authenticate', 'Bearer'] };
}
