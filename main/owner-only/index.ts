/**
 * Owner-only places: the rules for the directories, Unix sockets and per-user folders that only
 * this user may reach. The gateway (its socket and token), the fabric (the participant socket) and
 * the plugins (their cache) all follow them; each names its own files.
 */
export { AccessError, WINDOWS_UNSUPPORTED, currentUid, refuseWindows } from './platform.js';
export { defaultRuntimeDir, ensureRuntimeDir, userCacheDir, type EnsureRuntimeDirOptions } from './runtime-dir.js';
export { assertSocketPathFits, maxSocketPathBytes, socketPathFits } from './socket-path.js';
export { bindRefusal, clearStaleSocket } from './stale-socket.js';
export { bindOwnSocket } from './socket-bind.js';
export { MAX_JSON_FILE_BYTES, OwnerOnlyJsonFile, repeatedValue, type OwnerOnlyJsonFileOptions } from './json-file.js';
export { whyAncestorsOpen, whyFolderChainOpen, whyOpenToOthers } from './closed-to-others.js';
export { readRegularFile, readRegularFileSync, type RegularFileLimits, type RegularFileRead } from './regular-file.js';
