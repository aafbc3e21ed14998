/** The WebAssembly plugin runtime: `chatty:plugin@0.3.0` components, one worker thread per module. */
export {
  ModuleRegistry,
  defaultPluginCacheDir,
  type ModuleRegistryOptions,
  type ScanReport,
  type LoadedModule,
  type RemoteModule,
  type PendingModule,
  type ModuleChange,
  type ModuleChangeListener,
} from './registry.js';
export { RetiringHandle } from './live/retiring-handle.js';
export { ModulesWatcher, watchModules, WATCH_DEBOUNCE_MS, type ModulesWatcherOptions } from './watch/index.js';
export {
  PluginGrants,
  GRANTED_CAPABILITIES,
  componentDigest,
  shortDigest,
  grantsFileBeside,
  GrantsFileError,
  PluginsLockError,
  PluginGrantError,
  type GrantsOptions,
  type GrantedCapability,
  type CapabilityAsk,
  type PluginGrantRequest,
  type PluginGrantDecision,
  type PluginGrantHandler,
} from './grants/index.js';
export { ModuleHandle, type InvokeRequest, type InvokeOptions, type HandleStats } from './handle/index.js';
export { PluginCallError, PluginLoadError, type PluginCallErrorKind } from './errors.js';
export {
  parseManifest,
  isPlainRelativePath,
  ManifestSchema,
  DEFAULT_CEILINGS,
  type Manifest,
  type ModuleLimits,
  type ParsedManifest,
  type Ceilings,
  type ExecutionMode,
  type ModuleInfo,
} from './manifest.js';
export {
  stderrLogger,
  type Admission,
  type CreditMeter,
  type LlmProvider,
  type LlmRequest,
  type BillingProvider,
  type SessionInfo,
  type Providers,
  type PluginLogger,
  type GrantPolicy,
  type Message,
  type ToolCall,
  type CompletionResponse,
} from './providers.js';
export type {
  PluginMetadata,
  ToolDefinition,
  ToolOutcome,
  ToolErrorKind,
  TokenUsage,
  Capability,
  LogLevel,
} from './worker/protocol.js';
export * as limits from './limits.js';
export { PLUGIN_INTERFACE, pluginWitPath, packageRoot } from './world.js';
export {
  buildPlugin,
  newPlugin,
  ensureExamplesBuilt,
  examplesDir,
  templateDir,
  findPluginSource,
  sourcesDigest,
  type BuildResult,
  type EnsureExamplesOptions,
} from './build/index.js';
