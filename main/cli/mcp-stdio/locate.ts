import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { access } from '../../gateway/index.js';

/** Where a running gateway listens and the token it wants, as found in its runtime directory. */
export interface GatewayLocation {
  readonly runtimeDir: string;
  readonly socketPath: string;
  readonly tokenPath: string;
  readonly token: string;
}

/** A reason the bridge cannot start: one line for stderr, exit 1. */
export class BridgeStartError extends Error {
  override readonly name = 'BridgeStartError';
}

const START_HINT = 'start one with `chatty-gateway serve`';

/**
 * Finds the gateway's socket and token in the runtime directory (`serve`'s default when none is
 * given). The directory gets the same checks `serve` makes (owner-only, no symlink), since the
 * token read from it and the socket connected through it are only as trustworthy as the
 * directory; a missing one is not created, only reported.
 */
export function locateGateway(runtimeDir: string | undefined): GatewayLocation {
  access.refuseWindows();
  const dir = resolve(runtimeDir ?? access.defaultRuntimeDir());
  if (!existsSync(dir)) throw new BridgeStartError(`no gateway is running: ${dir} does not exist (${START_HINT})`);
  access.ensureRuntimeDir(dir);
  const socketPath = join(dir, access.SOCKET_FILE);
  const tokenPath = join(dir, access.TOKEN_FILE);
  if (!existsSync(socketPath)) throw new BridgeStartError(`no gateway is running: no ${access.SOCKET_FILE} in ${dir} (${START_HINT})`);
  return { runtimeDir: dir, socketPath, tokenPath, token: readToken(tokenPath, dir) };
}

/** The launch token as `serve` wrote it (raw, no newline); read again if the gateway restarts. */
export function readToken(tokenPath: string, dir: string): string {
  let token: string;
  try {
    token = readFileSync(tokenPath, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new BridgeStartError(`no gateway is running: no ${access.TOKEN_FILE} in ${dir} (${START_HINT})`);
    }
    throw err;
  }
  if (token === '') throw new BridgeStartError(`the token file ${tokenPath} is empty`);
  return token;
}

/** The hint for a socket nothing listens on (a gateway that was killed without stopping). */
export function notListening(location: GatewayLocation, reason: string): BridgeStartError {
  return new BridgeStartError(`no gateway is running: nothing listens on ${location.socketPath} (${reason}; ${START_HINT})`);
}
