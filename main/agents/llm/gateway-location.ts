import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { SOCKET_FILE, TOKEN_FILE, defaultRuntimeDir, readTokenFile } from '../../gateway/access/index.js';

/**
 * How the LLM agent's worker finds the gateway whose MCP plugin tools it offers the model. The
 * runner that spawns the worker says so in its environment:
 *
 * - `CHATTY_GATEWAY_SOCKET` and `CHATTY_GATEWAY_TOKEN_FILE`: the socket and the token file
 *   (`gatewayWorkerEnv(started)` gives both from what `ProtocolGateway.start()` returned);
 * - else `CHATTY_GATEWAY_RUNTIME_DIR`: a runtime directory holding `gateway.sock` and `gateway.token`;
 * - else `serve`'s default runtime directory, when a socket is there.
 *
 * The token is read from its file at each connection (a restarted gateway writes a new one), never
 * passed in the environment itself.
 */
export const GATEWAY_ENV = {
  socket: 'CHATTY_GATEWAY_SOCKET',
  tokenFile: 'CHATTY_GATEWAY_TOKEN_FILE',
  runtimeDir: 'CHATTY_GATEWAY_RUNTIME_DIR',
} as const;

export interface GatewayLocation {
  socketPath: string;
  tokenPath: string;
  /** Named by the environment (its failure fails the task) or only found in the default place (its failure is reported and the task goes on without plugin tools). */
  explicit: boolean;
}

/** The variables a runner sets so that an LLM worker reaches this gateway. */
export function gatewayWorkerEnv(started: { socketPath: string; tokenPath: string }): Record<string, string> {
  return { [GATEWAY_ENV.socket]: started.socketPath, [GATEWAY_ENV.tokenFile]: started.tokenPath };
}

/** Thrown for an environment that names the gateway wrongly (one variable of the pair, a relative path). */
export class GatewayLocationError extends Error {
  override readonly name = 'GatewayLocationError';
}

/** Where the gateway is, or undefined when the environment names none and the default place has no socket. */
export function locateGateway(env: NodeJS.ProcessEnv = process.env): GatewayLocation | undefined {
  const socket = env[GATEWAY_ENV.socket] || undefined;
  const tokenFile = env[GATEWAY_ENV.tokenFile] || undefined;
  if (socket !== undefined || tokenFile !== undefined) {
    if (socket === undefined || tokenFile === undefined) {
      const missing = socket === undefined ? GATEWAY_ENV.socket : GATEWAY_ENV.tokenFile;
      const given = socket === undefined ? GATEWAY_ENV.tokenFile : GATEWAY_ENV.socket;
      throw new GatewayLocationError(`${given} is set but ${missing} is not: set both, or neither`);
    }
    return { socketPath: absolute(GATEWAY_ENV.socket, socket), tokenPath: absolute(GATEWAY_ENV.tokenFile, tokenFile), explicit: true };
  }
  const runtimeDir = env[GATEWAY_ENV.runtimeDir] || undefined;
  if (runtimeDir !== undefined) {
    const dir = absolute(GATEWAY_ENV.runtimeDir, runtimeDir);
    return { socketPath: join(dir, SOCKET_FILE), tokenPath: join(dir, TOKEN_FILE), explicit: true };
  }
  const dir = defaultRuntimeDir(env);
  const socketPath = join(dir, SOCKET_FILE);
  return existsSync(socketPath) ? { socketPath, tokenPath: join(dir, TOKEN_FILE), explicit: false } : undefined;
}

/**
 * The launch token as the gateway wrote it, read by the gateway's one token reader (a regular file,
 * not a link, opened without blocking and bounded, visible ASCII only): a fifo there held this
 * worker's only thread, and the broker's cancel with it, for ever; a file of gigabytes was read
 * whole; a line break went into the token.
 */
export function readGatewayToken(location: GatewayLocation): string {
  const read = readTokenFile(location.tokenPath);
  if (!read.ok) throw new GatewayLocationError(`the gateway's token file ${location.tokenPath} ${read.problem}`);
  return read.token;
}

function absolute(name: string, path: string): string {
  if (!isAbsolute(path)) throw new GatewayLocationError(`${name} must be an absolute path, not ${JSON.stringify(path)}`);
  return path;
}
