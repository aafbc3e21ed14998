/**
 * Capability grants: what a plugin asks for beyond `logging` and `config`, pinned to its
 * component's digest, remembered in a grants file, pre-granted by a `plugins.lock`, and put to a
 * person through the registry's desk (`PluginGrants`).
 */
export { GRANTED_CAPABILITIES, type GrantedCapability, type CapabilityAsk, type PluginGrantRequest, type PluginGrantDecision, type PluginGrantHandler } from './types.js';
export { PluginGrants, type GrantOutcome } from './desk.js';
export { componentDigest, shortDigest, DIGEST_PATTERN } from './digest.js';
export { pluginAsks, capabilitiesOf, describeAsks, sameAsk, askReach } from './asks.js';
export { GrantsFile, GrantsFileError, grantsFileBeside } from './grants-file.js';
export { readPluginsLock, PluginsLockError } from './lock-file.js';
export { RememberedGrant, LockedGrant } from './record.js';
export { GrantStore, type GrantsOptions } from './store.js';
export { PluginGrantError, plainGrantCommand, ungrantedReason, type UngrantedWhy } from './refusal.js';
export { GrantGate, type GateHost, type GateInput, type ServedModule } from './gate.js';
export { moduleAsks, type ModuleAsks } from './module-asks.js';
