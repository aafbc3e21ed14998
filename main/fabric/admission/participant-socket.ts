import { chmodSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { clearStaleSocket, ensureRuntimeDir } from '../../gateway/access/index.js';
import { FrameCodec } from '../codec/frame-codec.js';
import { SHARED_SOCKET_HELLO_TIMEOUT_MS } from '../limits/constants.js';
import { wireError } from '../wire/wire-error.js';

export const PARTICIPANT_SOCKET_FILE = 'participant.sock';

/** What a hello on the shared socket is told. */
export const SHARED_SOCKET_REFUSAL = "a worker's connection is made by the broker that spawns it; this socket admits no one";

export interface ParticipantSocket {
  path: string;
  close(): Promise<void>;
}

export interface ParticipantSocketOptions {
  /** How long a connection may stay silent (default 5 s). */
  helloTimeoutMs?: number;
}

/**
 * The shared participant socket: bound in the owner-only runtime directory and refusing every
 * connection, so that no local process can register under a name the broker is about to route a
 * task to. A hello gets a `refused` error under its id, then the connection ends; any other
 * first line, or silence past the timeout, closes it without a word.
 */
export async function withParticipantSocket(dir: string, options: ParticipantSocketOptions = {}): Promise<ParticipantSocket> {
  const path = join(ensureRuntimeDir(dir), PARTICIPANT_SOCKET_FILE);
  await clearStaleSocket(path);
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
    refuse(socket, options.helloTimeoutMs ?? SHARED_SOCKET_HELLO_TIMEOUT_MS);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o600);
  let closing: Promise<void> | undefined;
  return {
    path,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => {
          rmSync(path, { force: true });
          resolve();
        });
      })),
  };
}

function refuse(socket: Socket, timeoutMs: number): void {
  const codec = FrameCodec.forBroker({ log: () => {} });
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  socket.on('close', () => clearTimeout(timer));
  socket.on('data', (chunk: Buffer) => {
    const first = codec.push(chunk)[0];
    if (!first) return;
    clearTimeout(timer);
    socket.removeAllListeners('data');
    if (first.type === 'message' && first.frame.method === 'session.hello') {
      socket.end(`${codec.fail(first.frame.id, wireError({ kind: 'refused', reason: SHARED_SOCKET_REFUSAL }))}\n`);
    } else {
      socket.destroy();
    }
  });
}
