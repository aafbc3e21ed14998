import type { IncomingHttpHeaders } from 'node:http';
import { isSupportedVersion, SUPPORTED_PROTOCOL_VERSIONS } from './versions.js';

/** A transport-level refusal: the status and the message of its JSON-RPC error body. */
export interface HeaderRefusal {
  readonly status: number;
  readonly message: string;
}

export const NOT_ACCEPTABLE = 'Not Acceptable: Client must accept both application/json and text/event-stream';
export const NOT_ACCEPTABLE_SSE = 'Not Acceptable: Client must accept text/event-stream';
export const UNSUPPORTED_MEDIA_TYPE = 'Unsupported Media Type: Content-Type must be application/json';

/**
 * Streamable HTTP POST (MCP 2025-03-26 and later): the client MUST list both `application/json`
 * and `text/event-stream` in Accept, and the body MUST be `application/json`. Media ranges count
 * (`*\/*`, `application/*`), so a generic client that accepts anything is served.
 */
export function checkStreamablePost(headers: IncomingHttpHeaders): HeaderRefusal | undefined {
  const accept = headers.accept === undefined ? undefined : admits(headers.accept);
  if (!accept?.json || !accept.stream) return { status: 406, message: NOT_ACCEPTABLE };
  return checkJsonBody(headers) ?? checkProtocolVersion(headers);
}

/** The legacy SSE POST: a JSON body and, when sent, a supported protocol version. */
export function checkLegacyPost(headers: IncomingHttpHeaders): HeaderRefusal | undefined {
  return checkJsonBody(headers) ?? checkProtocolVersion(headers);
}

/** The legacy SSE GET: an Accept that admits `text/event-stream` when one is sent. */
export function checkStreamGet(headers: IncomingHttpHeaders): HeaderRefusal | undefined {
  const accept = headers.accept;
  if (accept !== undefined && !admits(accept).stream) return { status: 406, message: NOT_ACCEPTABLE_SSE };
  return checkProtocolVersion(headers);
}

function checkJsonBody(headers: IncomingHttpHeaders): HeaderRefusal | undefined {
  const type = headers['content-type'];
  if (type === undefined || mediaType(type) !== 'application/json') return { status: 415, message: UNSUPPORTED_MEDIA_TYPE };
  return undefined;
}

/**
 * `mcp-protocol-version` is accepted on every request; an unsupported value is refused with 400.
 * Without it the server assumes 2025-03-26, which needs nothing different here.
 */
export function checkProtocolVersion(headers: IncomingHttpHeaders): HeaderRefusal | undefined {
  const version = headers['mcp-protocol-version'];
  if (version === undefined) return undefined;
  const value = Array.isArray(version) ? version.join(', ') : version;
  if (isSupportedVersion(value)) return undefined;
  return {
    status: 400,
    message: `Bad Request: Unsupported protocol version: ${value} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
  };
}

/** The bare media type of a Content-Type value, lower-cased, parameters dropped. */
function mediaType(value: string): string {
  const semi = value.indexOf(';');
  return (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase();
}

/** Accept values seen lately (clients send the same one on every request), with what they admit. */
const acceptMemo = new Map<string, { json: boolean; stream: boolean }>();
const ACCEPT_MEMO_SIZE = 64;

function admits(accept: string): { json: boolean; stream: boolean } {
  let known = acceptMemo.get(accept);
  if (known === undefined) {
    known = { json: acceptsType(accept, 'application', 'json'), stream: acceptsType(accept, 'text', 'event-stream') };
    if (acceptMemo.size >= ACCEPT_MEMO_SIZE) acceptMemo.clear();
    acceptMemo.set(accept, known);
  }
  return known;
}

/** Whether an Accept list admits `type/subtype`: exactly, by `type/*` or by `*\/*`, unless its q is 0. */
function acceptsType(accept: string, type: string, subtype: string): boolean {
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';');
    const [t, s] = range.trim().toLowerCase().split('/');
    const matches = (t === type && (s === subtype || s === '*')) || (t === '*' && s === '*');
    if (matches && !params.some((p) => /^\s*q\s*=\s*0(\.0*)?\s*$/i.test(p))) return true;
  }
  return false;
}
