/** The A2A surface: the remote-runner forward, the agent cards, and the refusal of roles over HTTP. */
export { a2aSurface, a2aRoute, AGGREGATED_CARD_PATH, moduleNotFoundMessage, noRunnerMessage, type A2aRoute, type A2aSurfaceOptions } from './routes.js';
export { RemoteRunner, MAX_UPSTREAM_JSON_BYTES } from './forward.js';
export { RemoteRunnerOptions, remoteRunnerSettings, RUNNER_CONNECT_TIMEOUT_MS, RUNNER_FIRST_BYTE_TIMEOUT_MS, RUNNER_IDLE_TIMEOUT_MS, type RemoteRunnerSettings } from './options.js';
export { ROLES_REFUSED, type RoleDirectory } from './roles.js';
export { AgentCardV03, AgentCardV1, AggregatedCard, CardSkill, aggregatedCard, cardV03, cardV1, type ForwardedModule, type RemoteModuleDirectory } from './cards.js';
export { MAX_SSE_EVENT_BYTES } from './sse-relay.js';
