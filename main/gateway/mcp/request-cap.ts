import { JSONRPC_VERSION, batchFrame, messageFrame, type ErrorResponse, type RequestId, type TransportFrame } from '../../jsonrpc/index.js';
import { TRANSPORT_ERROR } from './errors.js';

/**
 * Requests one client may have unanswered at once: on a legacy SSE session (whose POSTs are
 * answered 202 before the call runs, so nothing else would bound them), and in one Streamable
 * HTTP body (a batch, whose entries all run at once). Over it they are refused at once and
 * nothing of the body runs; the calls in flight are untouched. The fabric allows 32 calls per
 * connection; an MCP client twice that.
 */
export const MAX_REQUESTS_IN_FLIGHT = 64;

/** Where the cap was reached, as the refusal says it. */
export type CapScope = 'on this SSE session' | 'in one request body';

/** -32000 (a server error, as the fabric's `refused` and the SDK's transport errors). */
export function tooManyRequestsMessage(scope: CapScope): string {
  return `too many requests in flight ${scope}: at most ${MAX_REQUESTS_IN_FLIGHT}; wait for an answer before sending more`;
}

/** The answer to a body refused over the cap: each of its requests gets the error (a batch, a batch of them). */
export function overCapAnswer(frame: TransportFrame, ids: readonly RequestId[], scope: CapScope): TransportFrame | undefined {
  const error = { code: TRANSPORT_ERROR, message: tooManyRequestsMessage(scope) };
  const [first, ...rest] = ids.map((id): ErrorResponse => ({ jsonrpc: JSONRPC_VERSION, id, error }));
  if (first === undefined) return undefined;
  return frame.kind === 'batch' ? batchFrame([first, ...rest]) : messageFrame(first);
}
