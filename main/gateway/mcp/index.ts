/** The MCP surface: Streamable HTTP and legacy HTTP+SSE over one Dispatcher per module. */
export { mcpSurface, mcpRoute, type McpSurfaceOptions } from './routes.js';
export { mcpDispatcher, TOOLS_LIST_CHANGED } from './server.js';
export {
  SseSessions,
  SseSession,
  SSE_KEEP_ALIVE_MS,
  SSE_IDLE_MS,
  MAX_SSE_BACKLOG_BYTES,
  MAX_SSE_SESSIONS,
  type SseSessionEvent,
  type SseSessionListener,
} from './sse-sessions.js';
export { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, negotiateVersion, type ProtocolVersion } from './versions.js';
export { BUSY, BUSY_RETRY_AFTER_SECONDS, HttpRpcError, OUTPUT_TOO_LARGE, CREDIT_REFUSED, httpAnswerOf, pluginFailure, type HttpAnswer } from './errors.js';
