/**
 * The gateway's access: its files in the runtime directory, its launch token, and its runtime
 * directory (the owner-only rules of main/owner-only, with `gateway.sock` as the socket to fit).
 * The owner-only rules themselves are re-exported for `access.*` users (the CLI, the app).
 */
export { defaultRuntimeDir, ensureRuntimeDir } from './runtime-dir.js';
export { MAX_TOKEN_FILE_BYTES, newLaunchToken, readTokenFile, writeTokenFile, tokenMatches, type TokenFileRead } from './token.js';
export { EDGE_LOG_FILE, SOCKET_FILE, TOKEN_FILE } from './files.js';
export {
  AccessError,
  WINDOWS_UNSUPPORTED,
  assertSocketPathFits,
  clearStaleSocket,
  currentUid,
  maxSocketPathBytes,
  refuseWindows,
  socketPathFits,
  type EnsureRuntimeDirOptions,
} from '../../owner-only/index.js';
