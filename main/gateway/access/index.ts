export { AccessError, WINDOWS_UNSUPPORTED, refuseWindows, currentUid } from './platform.js';
export { defaultRuntimeDir, ensureRuntimeDir, userCacheDir, type EnsureRuntimeDirOptions } from './runtime-dir.js';
export { assertSocketPathFits, maxSocketPathBytes, socketPathFits } from './socket-path.js';
export { newLaunchToken, writeTokenFile, tokenMatches } from './token.js';
export { clearStaleSocket } from './stale-socket.js';
export { EDGE_LOG_FILE, SOCKET_FILE, TOKEN_FILE } from './files.js';
