import { ErrorCode, RpcError, type ErrorObject } from '../../jsonrpc/index.js';

/** A credit refusal is this code (over HTTP 200), with the meter's reason as its message. */
export const CREDIT_REFUSED = -32000;
/** The code of the transport-level refusals (406, 415, 400 for the version header, 405), as the MCP SDK sends them. */
export const TRANSPORT_ERROR = -32000;

export const OUTPUT_TOO_LARGE = 'tool output over the 1 MiB cap';

/** The HTTP side of an error answer: its status and, when the client should come back, `Retry-After` (seconds). */
export interface HttpAnswer {
  readonly status: number;
  readonly retryAfterSeconds?: number | undefined;
}

/**
 * The HTTP status (and `Retry-After`) an error answer asks for, keyed by the very error object
 * that goes on the wire: the Dispatcher builds each response from `toErrorObject()`, so the
 * Streamable HTTP route can find them again without the core knowing about HTTP.
 */
const httpOfError = new WeakMap<object, HttpAnswer>();

/** An RpcError whose standalone answer goes out with `status` (502, 503, 500) instead of 200. */
export class HttpRpcError extends RpcError {
  constructor(
    code: number,
    message: string,
    readonly status: number,
    readonly retryAfterSeconds?: number,
  ) {
    super(code, message);
  }

  override toErrorObject(): ErrorObject {
    const object = super.toErrorObject();
    httpOfError.set(object, { status: this.status, retryAfterSeconds: this.retryAfterSeconds });
    return object;
  }
}

/** The status and `Retry-After` an `HttpRpcError` asked for, if this error object came from one. */
export function httpAnswerOf(error: ErrorObject): HttpAnswer | undefined {
  return httpOfError.get(error);
}

/** A module holding its cap of waiting calls (`busy`): the client is told to come back in this many seconds. */
export const BUSY_RETRY_AFTER_SECONDS = 1;
/** A busy refusal is this code (a server error, as the other refusals), over HTTP 503. */
export const BUSY = -32000;

/**
 * A cancelled call's answer: -32800 (the code LSP gave "request cancelled"; MCP names none).
 * The legacy transport never sends it (MCP: no answer to a cancelled request); a Streamable HTTP
 * POST must be answered with something, and this says what happened.
 */
export const REQUEST_CANCELLED = -32800;

/** The answer for a call cancelled for `reason` (a `CallCancelled`: notifications/cancelled, or the client went away). */
export function cancelledError(reason: unknown): RpcError {
  return new RpcError(REQUEST_CANCELLED, `Request cancelled: ${reason instanceof Error ? reason.message : String(reason)}`);
}

/** Unknown module and a plugin without `mcp = true` alike. */
export function moduleNotFoundMessage(name: string): string {
  return `module '${name}' not found`;
}

/**
 * A plugin call that failed outside the guest's own `result`: output over the cap is a 502 with
 * a short message (never the output), a credit refusal is -32000 with the reason (HTTP 200), a
 * module with too many calls waiting (`busy`) is -32000 `busy: …` with 503 and `Retry-After: 1`,
 * a module whose engine start ran out of time and waits to be tried again is -32000 `crashed: …`
 * with 503 and `Retry-After` (the wait left, in whole seconds rounded up),
 * anything else (trap, timeout, crash, unloaded) is a 500.
 */
export function pluginFailure(err: unknown): RpcError {
  const kind = typeof err === 'object' && err !== null ? (err as { kind?: unknown }).kind : undefined;
  const message = err instanceof Error ? err.message : String(err);
  // A module whose engine is not tried again yet (`StartWaitError`): the client may come back after the wait.
  const retryAfterMs = typeof err === 'object' && err !== null ? (err as { retryAfterMs?: unknown }).retryAfterMs : undefined;
  if (kind === 'crashed' && typeof retryAfterMs === 'number') {
    return new HttpRpcError(BUSY, `crashed: ${short(message)}`, 503, Math.max(1, Math.ceil(retryAfterMs / 1000)));
  }
  switch (kind) {
    case 'output_too_large':
      return new HttpRpcError(ErrorCode.InternalError, OUTPUT_TOO_LARGE, 502);
    case 'credit_refused':
      return new RpcError(CREDIT_REFUSED, message);
    case 'busy':
      return new HttpRpcError(BUSY, message.startsWith('busy:') ? short(message) : `busy: ${short(message)}`, 503, BUSY_RETRY_AFTER_SECONDS);
    case undefined:
      return new HttpRpcError(ErrorCode.InternalError, 'Internal error', 500);
    default:
      return new HttpRpcError(ErrorCode.InternalError, `${String(kind)}: ${short(message)}`, 500);
  }
}

/** Guest-derived text kept to one short line. */
function short(text: string, max = 300): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
