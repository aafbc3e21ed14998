import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { access } from '../../gateway/index.js';

/** Where a running gateway listens and the token it wants, as found in its runtime directory. */
export interface GatewayLocation {
  readonly runtimeDir: string;
  readonly socketPath: string;
  readonly tokenPath: string;
  readonly token: string;
  /** What to do when no gateway answers there, for the stderr line. */
  readonly startHint: string;
}

/** A reason the bridge cannot start: one line for stderr, exit 1. */
export class BridgeStartError extends Error {
  override readonly name = 'BridgeStartError';
}

/**
 * Finds the gateway's socket and token in the runtime directory (`serve`'s default when none is
 * given). The directory gets the same checks `serve` makes (owner-only, no symlink), since the
 * token read from it and the socket connected through it are only as trustworthy as the
 * directory; a missing one is not created, only reported.
 */
export function locateGateway(runtimeDir: string | undefined, env: NodeJS.ProcessEnv = process.env): GatewayLocation {
  access.refuseWindows();
  const dir = resolve(runtimeDir ?? defaultDirWithGateway(env));
  const startHint =
    runtimeDir === undefined
      ? 'start one with `chatty-gateway serve`, or pass the --runtime-dir it uses'
      : `start one with \`chatty-gateway serve --runtime-dir ${runtimeDir}\``;
  if (!existsSync(dir)) throw new BridgeStartError(`no gateway is running: ${dir} does not exist (${startHint})`);
  access.ensureRuntimeDir(dir);
  const socketPath = join(dir, access.SOCKET_FILE);
  const tokenPath = join(dir, access.TOKEN_FILE);
  if (!existsSync(socketPath)) throw new BridgeStartError(`no gateway is running: no ${access.SOCKET_FILE} in ${dir} (${startHint})`);
  let token: string;
  try {
    token = readToken(tokenPath);
  } catch (err) {
    if (!(err instanceof TokenFileMissing)) throw err;
    throw new BridgeStartError(`no gateway is running: no ${access.TOKEN_FILE} in ${dir} (${startHint})`);
  }
  return { runtimeDir: dir, socketPath, tokenPath, token, startHint };
}

/**
 * `serve`'s default runtime directory. MCP clients often launch servers with a trimmed
 * environment (the SDK's stdio transport passes HOME, PATH, SHELL, TERM, USER and LOGNAME only),
 * so a gateway started from a login shell, under `$XDG_RUNTIME_DIR`, would be looked for in the
 * cache directory instead. Without that variable, the systemd default `/run/user/<uid>` is tried
 * too; the first candidate holding a socket wins, else the plain default is reported.
 */
export function defaultDirWithGateway(env: NodeJS.ProcessEnv): string {
  const candidates = [access.defaultRuntimeDir(env)];
  if (!env.XDG_RUNTIME_DIR && process.platform === 'linux') {
    candidates.push(access.defaultRuntimeDir({ ...env, XDG_RUNTIME_DIR: `/run/user/${access.currentUid()}` }));
  }
  return candidates.find((dir) => existsSync(join(dir, access.SOCKET_FILE))) ?? candidates[0]!;
}

/** No token file at the path (no gateway, or one stopping). */
class TokenFileMissing extends BridgeStartError {}

/**
 * The launch token as `serve` wrote it; read again if the gateway restarts. Read by the one token
 * reader (`access.readTokenFile`: a regular file, not a link, without blocking, bounded, visible
 * ASCII), each refusal one stderr line.
 */
export function readToken(tokenPath: string): string {
  const read = access.readTokenFile(tokenPath);
  if (read.ok) return read.token;
  const message = `the token file ${tokenPath} ${read.problem}`;
  throw read.missing ? new TokenFileMissing(message) : new BridgeStartError(message);
}

/** The hint for a socket nothing listens on (a gateway that was killed without stopping). */
export function notListening(location: GatewayLocation, reason: string): BridgeStartError {
  return new BridgeStartError(`no gateway is running: nothing listens on ${location.socketPath} (${reason}; ${location.startHint})`);
}
