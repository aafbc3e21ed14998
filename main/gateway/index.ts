export { ProtocolGateway, type ProtocolGatewayOptions, type StartedGateway } from './protocol-gateway.js';
export { EdgeLog, type EdgeRow, type EdgeListener } from './edge/edge-log.js';
export { MAX_REQUEST_BYTES } from './guards/body-limit.js';
export type { ModuleDirectory, ServedModule } from './modules.js';
export type { GatewayState, GatewayContext } from './context.js';
export * as access from './access/index.js';
