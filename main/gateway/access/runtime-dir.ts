import * as ownerOnly from '../../owner-only/index.js';
import { SOCKET_FILE } from './files.js';

/** The gateway's runtime directory by default: the owner-only default, where `gateway.sock` fits. */
export function defaultRuntimeDir(env: NodeJS.ProcessEnv = process.env): string {
  return ownerOnly.defaultRuntimeDir(SOCKET_FILE, env);
}

/** Creates or checks the gateway's runtime directory by the owner-only rules; the socket to fit is `gateway.sock` unless another is named. */
export function ensureRuntimeDir(dir: string, options: Partial<ownerOnly.EnsureRuntimeDirOptions> = {}): string {
  return ownerOnly.ensureRuntimeDir(dir, { socketFile: options.socketFile ?? SOCKET_FILE });
}
