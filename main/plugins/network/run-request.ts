import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, isIPv4 } from 'node:net';
import type { AllowList } from './allow-list.js';
import type { ErrorCode, NetworkAnswer, NetworkRequest } from './exchange.js';
import { asIPv4, specialRange } from './special-address.js';

/** Resolves a name to its addresses (tests give their own; no internet here). */
export type Resolve = (name: string) => Promise<{ address: string; family: number }[]>;

export interface RunOptions {
  /** null: the plugin has no network at all. */
  allow: AllowList | null;
  /** The most response body bytes this request may bring in (what is left of the call's budget). */
  maxBodyBytes: number;
  timeoutMs: number;
  resolve?: Resolve;
}

export type Refusal = { ok: false; error: ErrorCode; message: string };

/** Where a request goes, as the log names it (`host:port`), once its URL has passed the list. */
export interface Target {
  url: URL;
  host: string;
  port: number;
  /** `host:port`, IPv6 in brackets. */
  label: string;
}

const denied = (message: string): Refusal => ({ ok: false, error: { tag: 'HTTP-request-denied' }, message: `network: ${message}` });

/** Methods fetch itself forbids: CONNECT would open a tunnel through a listed host, TRACE echoes headers back. */
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/** The method, host and port of a request, checked against the allow-list; no DNS yet. */
export function checkTarget(allow: AllowList | null, method: string, url: string): Target | Refusal {
  if (allow === null) return denied("this plugin has no network access (its module.toml has no [network] allow list, or it was not granted)");
  if (FORBIDDEN_METHODS.has(method.toUpperCase())) return { ok: false, error: { tag: 'HTTP-request-method-invalid' }, message: `network: the method ${method} may not be sent` };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, error: { tag: 'HTTP-request-URI-invalid' }, message: `network: ${unparsedOrigin(url)} is not a URL` };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return denied(`only http and https may be fetched, not ${parsed.protocol}`);
  if (parsed.username || parsed.password) return denied('a URL with a user name or password is not sent');
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
  const host = parsed.hostname;
  const label = `${host}:${port}`;
  const entry = allow.match(host, port);
  if (!entry) return denied(`${label} is not on the plugin's [network] allow list`);
  return { url: parsed, host, port, label };
}

/** One redirect followed on the way, for the module log. */
export interface Hop {
  method: string;
  target: string;
  status: number;
  /** The redirect's own body, read and dropped; it counts against the budget. */
  bytes: number;
}

/** The answer, where the last request went (`host:port`) and with which method, and the redirects before it. */
export type RunAnswer = NetworkAnswer & { target: string; method: string; hops: Hop[] };

/** Redirects followed before the request is refused (the fetch standard's limit). */
export const MAX_REDIRECTS = 20;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers that do not follow a redirect to another origin (fetch drops these too). */
const CREDENTIALS = new Set(['authorization', 'cookie', 'proxy-authorization']);

/**
 * Performs one request the allow-list admits. A name is resolved here, each address checked, and
 * the connection made to the checked address (the name still goes in `Host` and TLS's SNI), so
 * a second DNS answer cannot differ from the one checked. The body is read up to
 * `maxBodyBytes`; past it the request is cut and refused.
 *
 * Redirects are followed here (the guest's fetch does not follow them), each hop checked like
 * the first: a redirect to a host or port the list does not name is refused, not reached.
 */
export async function runRequest(request: NetworkRequest, options: RunOptions): Promise<RunAnswer> {
  try {
    return await follow(request, options);
  } catch (err) {
    // Nothing above should throw; if it does, the guest still gets an answer, not a lost request.
    const message = `network: ${err instanceof Error ? err.message : String(err)}`;
    return { ok: false, error: { tag: 'internal-error', val: message }, message, target: targetLabel(request.url), method: request.method, hops: [] };
  }
}

async function follow(request: NetworkRequest, options: RunOptions): Promise<RunAnswer> {
  const hops: Hop[] = [];
  let current = request;
  let left = options.maxBodyBytes;
  // One clock for the request and all its redirects.
  const deadline = performance.now() + options.timeoutMs;
  for (;;) {
    const target = checkTarget(options.allow, current.method, current.url);
    if ('ok' in target) {
      const from = hops.at(-1);
      const message = from ? `network: ${from.target} redirected to ${targetLabel(current.url)}: ${target.message.replace(/^network: /, '')}` : target.message;
      return { ...target, message, target: targetLabel(current.url), method: current.method, hops };
    }
    const answer = await resolveAndSend(current, target, { ...options, maxBodyBytes: left }, deadline);
    const location = answer.ok && REDIRECTS.has(answer.status) ? answer.headers.find(([name]) => name.toLowerCase() === 'location')?.[1] : undefined;
    if (!answer.ok || location === undefined) return { ...answer, target: target.label, method: current.method, hops };
    hops.push({ method: current.method, target: target.label, status: answer.status, bytes: answer.body.length });
    left -= answer.body.length;
    if (hops.length > MAX_REDIRECTS) {
      return { ok: false, error: { tag: 'loop-detected' }, message: `network: more than ${MAX_REDIRECTS} redirects from ${targetLabel(request.url)}`, target: target.label, method: current.method, hops };
    }
    current = nextHop(current, target.url, answer.status, location);
  }
}

/** The request a redirect asks for: 303 (and 301/302 after a POST) become a GET without a body. */
function nextHop(request: NetworkRequest, from: URL, status: number, location: string): NetworkRequest {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    return { ...request, url: location }; // checkTarget refuses it, naming it
  }
  const toGet = (status === 303 && request.method !== 'HEAD') || ((status === 301 || status === 302) && request.method === 'POST');
  const sameOrigin = next.origin === from.origin;
  const headers = request.headers.filter(([name]) => {
    const key = name.toLowerCase();
    if (toGet && key.startsWith('content-')) return false;
    return sameOrigin || !CREDENTIALS.has(key);
  });
  return { method: toGet ? 'GET' : request.method, url: next.href, headers, body: toGet ? null : request.body };
}

async function resolveAndSend(request: NetworkRequest, target: Target, options: RunOptions, deadline: number): Promise<NetworkAnswer> {
  const bare = target.host.startsWith('[') ? target.host.slice(1, -1) : target.host;
  let address: string;
  if (isIP(bare)) {
    address = bare; // an IP literal is reached only when the list names it: checkTarget has seen to that
  } else {
    let addresses: { address: string; family: number }[];
    try {
      addresses = await (options.resolve ?? defaultResolve)(bare);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'ENOTFOUND';
      return { ok: false, error: { tag: 'DNS-error', val: { rcode: code, infoCode: undefined } }, message: `network: ${bare} could not be resolved (${code})` };
    }
    if (addresses.length === 0) return { ok: false, error: { tag: 'destination-not-found' }, message: `network: ${bare} has no address` };
    // Every answer must pass: a name that also points at this machine is refused, not half-used.
    for (const a of addresses) {
      const range = specialRange(a.address);
      if (range && !mayReachLocal(options.allow!, bare, a.address, range, target.port)) {
        return {
          ok: false,
          error: { tag: 'destination-IP-prohibited' },
          message: `network: ${bare} resolves to ${a.address} (${range}), an address the plugin's [network] allow list does not name; a name reaches a local address only when the list names that address too (e.g. "127.0.0.1:8080")`,
        };
      }
    }
    address = addresses[0]!.address;
  }
  return send(request, target, address, options, deadline);
}

/**
 * A name the list admits reaches a loopback, private or other local address only when the list
 * names that address as well: the name's owner controls its DNS, so "api.plugin-author.dev" granted
 * must not become 127.0.0.1 or the cloud's 169.254.169.254. `localhost` is loopback by definition
 * (RFC 6761): naming it names loopback, and nothing else.
 */
function mayReachLocal(allow: AllowList, name: string, address: string, range: string, port: number): boolean {
  if (name === 'localhost' && range === 'loopback') return true;
  const plain = address.replace(/%.*$/, ''); // a zone id ("fe80::1%eth0") is no part of a URL's host
  const forms = [isIPv4(plain) ? plain : new URL(`http://[${plain}]/`).hostname, asIPv4(plain)];
  return forms.some((form) => form !== null && allow.match(form, port)?.kind === 'ip');
}

/** Headers about one connection: the host's own, whatever the guest set. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'host', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'content-length']);

const defaultResolve: Resolve = (name) => dnsLookup(name, { all: true, verbatim: true });

function send(request: NetworkRequest, target: Target, address: string, options: RunOptions, deadline: number): Promise<NetworkAnswer> {
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (answer: NetworkAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const timedOut = (): NetworkAnswer => ({ ok: false, error: { tag: 'HTTP-response-timeout' }, message: `network: ${target.label} did not answer within ${options.timeoutMs} ms` });
    const left = deadline - performance.now();
    if (left <= 0) return finish(timedOut());
    const headers: [string, string][] = [['Host', target.url.host], ...request.headers.filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase()))];
    if (request.body) headers.push(['Content-Length', String(request.body.length)]);
    const https = target.url.protocol === 'https:';
    let req: ReturnType<typeof httpRequest>;
    try {
      req = (https ? httpsRequest : httpRequest)({
      host: address,
      port: target.port,
      method: request.method,
      path: `${target.url.pathname}${target.url.search}`,
      headers: headers.flat(),
      setHost: false,
      agent: false,
        // TLS checks the certificate against the name asked for, not the address connected to.
        ...(https && !isIP(target.host.replace(/^\[|\]$/g, '')) ? { servername: target.host } : {}),
      });
    } catch (err) {
      // Node checks header values, the method and the path as it builds the request: nothing was sent.
      const message = `network: ${target.label}: the request could not be sent (${(err as NodeJS.ErrnoException).code ?? 'invalid'})`;
      return finish({ ok: false, error: { tag: 'internal-error', val: message }, message });
    }
    timer = setTimeout(() => {
      req.destroy();
      finish(timedOut());
    }, left);
    req.on('error', (err: NodeJS.ErrnoException) => finish(connectionError(err, target.label)));
    req.on('response', (res: IncomingMessage) => {
      // A HEAD answer, a 204 or a 304 has no body, whatever its Content-Length says.
      const bodiless = request.method.toUpperCase() === 'HEAD' || res.statusCode === 204 || res.statusCode === 304;
      const declared = bodiless ? 0 : Number(res.headers['content-length']);
      if (declared > options.maxBodyBytes) {
        res.destroy();
        finish(tooLarge(target.label, options.maxBodyBytes, declared));
        return;
      }
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > options.maxBodyBytes) {
          res.destroy();
          finish(tooLarge(target.label, options.maxBodyBytes, undefined));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => {
        const headers: [string, string][] = [];
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headers.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        finish({ ok: true, status: res.statusCode ?? 0, headers, body: new Uint8Array(Buffer.concat(chunks)) });
      });
      res.on('error', (err: NodeJS.ErrnoException) => finish(connectionError(err, target.label)));
    });
    req.end(request.body ?? undefined);
  });
}

function tooLarge(label: string, max: number, declared: number | undefined): NetworkAnswer {
  return {
    ok: false,
    error: { tag: 'HTTP-response-body-size', val: declared === undefined ? undefined : BigInt(declared) },
    message: `network: the response body from ${label} is over the ${max}-byte budget of this call`,
  };
}

function connectionError(err: NodeJS.ErrnoException, label: string): NetworkAnswer {
  const tag =
    err.code === 'ECONNREFUSED' ? 'connection-refused'
    : err.code === 'ECONNRESET' ? 'connection-terminated'
    : err.code === 'ETIMEDOUT' ? 'connection-timeout'
    : err.code?.startsWith('ERR_TLS') || err.code?.includes('CERT') ? 'TLS-certificate-error'
    : 'internal-error';
  const message = `network: ${label}: ${err.code ?? err.message}`;
  return { ok: false, error: tag === 'internal-error' ? { tag, val: message } : { tag }, message };
}

/** `host:port` of a URL, for the log (its scheme and host as written, when it does not parse). */
export function targetLabel(url: string): string {
  try {
    const u = new URL(url);
    return u.port ? u.host : `${u.hostname}:${u.protocol === 'https:' ? 443 : u.protocol === 'http:' ? 80 : '?'}`;
  } catch {
    return unparsedOrigin(url);
  }
}

/** A URL that does not parse, quoted, cut before its path, query and user name: they carry tokens. */
function unparsedOrigin(url: string): string {
  const scheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.exec(url)?.[0] ?? '';
  const authority = url.slice(scheme.length).split(/[/?#\\]/, 1)[0]!;
  return JSON.stringify(`${scheme}${authority.slice(authority.lastIndexOf('@') + 1)}`.slice(0, 100));
}
