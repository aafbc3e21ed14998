/** chatty-protocol-gateway: the library an embedder imports. */
export * from './gateway/index.js';
export * from './plugins/index.js';
export { openModules, type OpenModulesOptions, type OpenedModules } from './compose/modules.js';
export * as fabric from './fabric/index.js';
export {
  Directory,
  FrameCodec,
  ParticipantRegistry,
  openConnection,
  serveConnection,
  withParticipantSocket,
} from './fabric/index.js';
export * from './broker/index.js';
export { GitWorktreeFactory, type GitWorktreeFactoryOptions } from './broker/runners/index.js';
export { defaultWorker } from './agents/worker-command.js';
export { LocalRunner, type LocalRunnerOptions } from './agents/default-local-runner.js';
// The composition helpers an embedder needs to run the bundled agents (docs/embedding.md).
export {
  BUNDLED_AGENT_NAMES,
  bundledAgents,
  detectWorkspace,
  workspaceFactoryFor,
  type BundledAgent,
  type BundledAgentsOptions,
  type BundledWorkspace,
} from './agents/bundled.js';
export { gatewayWorkerEnv } from './agents/llm/gateway-location.js';
