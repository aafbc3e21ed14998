/**
 * main/jsonrpc: transport-neutral JSON-RPC 2.0.
 * Wire shapes and frames at the bottom, the protocol layer (Dispatcher, Connection) above them,
 * and transports that move frames: in-process channel, newline-delimited streams, HTTP, SSE.
 */
export {
  JSONRPC_VERSION,
  ErrorObjectSchema,
  ErrorResponseSchema,
  MessageSchema,
  NotificationSchema,
  ParamsSchema,
  RequestIdSchema,
  RequestSchema,
  ResponseSchema,
  SuccessResponseSchema,
  isNotification,
  isRequest,
  isResponse,
  type ErrorObject,
  type ErrorResponse,
  type Message,
  type Notification,
  type Params,
  type Request,
  type RequestId,
  type Response,
  type SuccessResponse,
} from './wire.js';
export { ErrorCode, RpcError } from './rpc-error.js';
export { ConnectionClosedError, RequestTimeoutError } from './errors.js';
export { arrayLongerThan } from './batch-length.js';
export {
  BATCH_TOO_LONG_MESSAGE,
  MAX_BATCH_ENTRIES,
  TOO_DEEP_MESSAGE,
  batchFrame,
  frameFromJson,
  messageFrame,
  parseFrame,
  serializeFrame,
  type BatchEntry,
  type BatchFrame,
  type MalformedFrame,
  type MessageFrame,
  type TransportFrame,
} from './frame.js';
export {
  Dispatcher,
  type DispatchOptions,
  type DispatcherOptions,
  type HandlerContext,
  type NotificationHandler,
  type RequestHandler,
} from './dispatcher.js';
export { Connection, type ConnectionOptions, type RequestOptions } from './connection.js';
export type { FrameTransport } from './transport.js';
export { createChannelPair } from './channel.js';
export { FramingError, InvalidUtf8Error, LineSplitter, LineTooLongError } from './line-splitter.js';
export { DEFAULT_MAX_LINE_BYTES, duplexTransport, streamTransport, type StreamTransportOptions } from './ndjson-stream.js';
export { dispatchOnce, type DispatchOnceOptions } from './http.js';
export { CallAbort, type AbortLike } from './call-abort.js';
export { untilAborted } from './until-aborted.js';
export { formatSseComment, formatSseEvent, formatSseMessage, type SseEvent } from './sse.js';
