export { ProtocolGateway, type ProtocolGatewayOptions, type StartedGateway } from './protocol-gateway.js';
export { EdgeLog, type EdgeRow, type EdgeListener } from './edge/edge-log.js';
export { MAX_REQUEST_BYTES } from './guards/body-limit.js';
export { MAX_READING_BODY_BYTES } from './reading/reading-bodies.js';
export { MAX_UNSENT_BYTES } from './unsent/unsent-bytes.js';
export { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './connection-limits.js';
export type { CallableModule, ModuleDirectory, ModuleTool, ModuleToolOutcome, ServedModule } from './modules.js';
export { SSE_KEEP_ALIVE_MS, SUPPORTED_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION, type SseSessionEvent } from './mcp/index.js';
export type { GatewayState, GatewayContext } from './context.js';
export * as access from './access/index.js';
export {
  ROLES_REFUSED,
  RUNNER_CONNECT_TIMEOUT_MS,
  RUNNER_FIRST_BYTE_TIMEOUT_MS,
  RUNNER_IDLE_TIMEOUT_MS,
  type RemoteRunnerOptions,
  type ForwardedModule,
  type RemoteModuleDirectory,
  type RoleDirectory,
} from './a2a/index.js';
