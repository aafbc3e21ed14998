import { classifyEntry, classifyMalformed } from '../../jsonrpc/classify.js';
import { isNonEmpty } from '../../jsonrpc/frame.js';
import {
  BATCH_TOO_LONG_MESSAGE,
  ErrorCode,
  TOO_DEEP_MESSAGE,
  JSONRPC_VERSION,
  batchFrame,
  isRequest,
  messageFrame,
  type ErrorObject,
  type ErrorResponse,
  type Message,
  type RequestId,
  type TransportFrame,
} from '../../jsonrpc/index.js';

/** Errors the bridge makes up itself (the gateway could not be asked, or did not answer). */
export const BRIDGE_ERROR = -32000;

/**
 * The ids a frame is owed answers for: its requests, and the call-shaped invalid entries whose
 * id can be read (the JSON-RPC rules answer those too). Notifications and responses are owed
 * nothing.
 */
export function owedIds(frame: TransportFrame): RequestId[] {
  switch (frame.kind) {
    case 'message':
      return isRequest(frame.message) ? [frame.message.id] : [];
    case 'batch':
      return frame.entries.flatMap((entry) => {
        const incoming = classifyEntry(entry);
        if (incoming.kind === 'request') return [incoming.request.id];
        return incoming.kind === 'invalid' && incoming.id !== null ? [incoming.id] : [];
      });
    case 'malformed': {
      const incoming = frame.reason === 'shape' ? classifyMalformed(frame.value) : undefined;
      return incoming?.kind === 'invalid' && incoming.id !== null ? [incoming.id] : [];
    }
  }
}

export function errorResponse(id: RequestId | null, error: ErrorObject): ErrorResponse {
  return { jsonrpc: JSONRPC_VERSION, id, error };
}

/** The answer to a batch over the entry cap, which the gateway would refuse the same way: one Invalid Request, id null. */
export function batchTooLongFrame(): TransportFrame {
  return messageFrame(errorResponse(null, { code: ErrorCode.InvalidRequest, message: BATCH_TOO_LONG_MESSAGE }));
}

/**
 * The answer to a line nesting more than 1,000 levels (main/jsonrpc's cap), which the gateway
 * would refuse the same way (its Dispatcher, from the line's top-level members): -32600 under its
 * id, null when none can be read; nothing for a response.
 */
export function tooDeepFrame(top: Record<string, unknown> | undefined): TransportFrame | undefined {
  const incoming = classifyMalformed(top);
  return incoming.kind === 'invalid' ? messageFrame(errorResponse(incoming.id, { code: ErrorCode.InvalidRequest, message: TOO_DEEP_MESSAGE })) : undefined;
}

/** The answer to a line that is not JSON: Parse error, id null (nothing else can be read). */
export function parseErrorFrame(): TransportFrame {
  return messageFrame(errorResponse(null, { code: ErrorCode.ParseError, message: 'Parse error' }));
}

/**
 * Answers `ids` with `error`, shaped like what the client sent: a batch gets an array (with any
 * answers already gathered for it), a single request one response. Nothing when nothing is owed.
 */
export function answerFrame(sentBatch: boolean, gathered: readonly Message[], ids: readonly RequestId[], error: ErrorObject): TransportFrame | undefined {
  const messages: Message[] = [...gathered, ...ids.map((id) => errorResponse(id, error))];
  if (!isNonEmpty(messages)) return undefined;
  return sentBatch ? batchFrame(messages) : messageFrame(messages[0]);
}
