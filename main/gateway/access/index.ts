export { AccessError, WINDOWS_UNSUPPORTED, refuseWindows, currentUid } from './platform.js';
export { defaultRuntimeDir, ensureRuntimeDir, userCacheDir } from './runtime-dir.js';
export { newLaunchToken, writeTokenFile, tokenMatches } from './token.js';
export { clearStaleSocket } from './stale-socket.js';

export const SOCKET_FILE = 'gateway.sock';
export const TOKEN_FILE = 'gateway.token';
export const EDGE_LOG_FILE = 'edge.log';
