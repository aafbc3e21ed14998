import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import type { GuardRefusal } from '../context.js';

export const HOST_NOT_LOOPBACK = 'forbidden: the Host header is not a loopback name';
export const ORIGIN_NOT_LOOPBACK = 'forbidden: the Origin header is not loopback';

export const DUPLICATE_HOST = 'bad request: more than one Host header';
export const TARGET_NOT_LOOPBACK = "forbidden: the request target's host is not a loopback name";

/**
 * Loopback Host and Origin only: a guard against DNS rebinding for any listener an embedder puts
 * in front of the socket. A request without Host (not a browser's) is served. More than one Host
 * is a 400 (RFC 9112 §3.2): Node keeps the first, a proxy in front may have read the last.
 */
export function loopbackRefusal(headers: IncomingHttpHeaders, rawHeaders: readonly string[] = [], target = '/'): GuardRefusal | undefined {
  if (hasSecondHost(rawHeaders)) return { status: 400, error: DUPLICATE_HOST, reason: DUPLICATE_HOST };
  // An absolute-form target's authority replaces Host (RFC 9112 §3.2.2): checked as Host is. One char test on the usual path.
  if (target.charCodeAt(0) !== 0x2f && !isLoopbackTarget(target)) {
    return { status: 403, error: TARGET_NOT_LOOPBACK, reason: `request target not loopback: ${truncate(target)}` };
  }
  const host = headers.host;
  if (host !== undefined && !isLoopbackHost(host)) {
    return { status: 403, error: HOST_NOT_LOOPBACK, reason: `host not loopback: ${truncate(host)}` };
  }
  const origin = headers.origin;
  if (origin !== undefined && !isLoopbackOrigin(origin)) {
    return { status: 403, error: ORIGIN_NOT_LOOPBACK, reason: `origin not loopback: ${truncate(origin)}` };
  }
  return undefined;
}

/** Whether Host comes twice in Node's flat [name, value, …] list (a length test first: this runs on every request). */
function hasSecondHost(rawHeaders: readonly string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length !== 4 || name.toLowerCase() !== 'host') continue;
    if (seen) return true;
    seen = true;
  }
  return false;
}

/** An absolute-form target (`http://host[:port]/…`) whose host is loopback; anything else that is not a path is not. */
function isLoopbackTarget(target: string): boolean {
  try {
    const url = new URL(target);
    return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.host);
  } catch {
    return false;
  }
}

/** `localhost`, `127.0.0.0/8` or `[::1]`, with or without a port. */
export function isLoopbackHost(value: string): boolean {
  const host = stripPort(value.trim().toLowerCase());
  if (host === undefined) return false;
  if (host === 'localhost') return true;
  if (host === '[::1]') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return false;
}

/** An Origin is `scheme://host[:port]`; `null` and anything unparsable are not loopback. */
export function isLoopbackOrigin(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.origin === 'null' || (url.protocol !== 'http:' && url.protocol !== 'https:')) return false;
  return isLoopbackHost(url.host);
}

function stripPort(host: string): string | undefined {
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    if (end < 0) return undefined;
    const rest = host.slice(end + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return undefined;
    return host.slice(0, end + 1);
  }
  const colon = host.indexOf(':');
  if (colon < 0) return host;
  if (!/^\d{1,5}$/.test(host.slice(colon + 1))) return undefined;
  return host.slice(0, colon);
}

function truncate(s: string): string {
  return s.length > 80 ? `${s.slice(0, 80)}…` : s;
}
