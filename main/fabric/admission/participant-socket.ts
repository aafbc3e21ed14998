import { chmodSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { capConnections } from '../../connection-cap/index.js';
import { bindOwnSocket, ensureRuntimeDir } from '../../owner-only/index.js';
import { FrameCodec } from '../codec/frame-codec.js';
import { CLOSE_GRACE_MS, SHARED_SOCKET_HELLO_TIMEOUT_MS } from '../limits/constants.js';
import { OutboundQueue } from '../limits/outbound-queue.js';
import { wireError } from '../wire/wire-error.js';

export const PARTICIPANT_SOCKET_FILE = 'participant.sock';

/**
 * Connections the shared socket holds at once (each until its first line, or its hello timeout);
 * one more closes the oldest that has not sent its first line yet, else the oldest whose refusal is
 * flushed (the newcomer itself only when every other one's is still on its way): the gateway's
 * rule, `capConnections`. Any process running as the user (a worker)
 * can connect, and each connection held is a descriptor of the gateway's: with no cap, opening
 * connections faster than the timeout closed them ran the gateway out of descriptors (no worker
 * spawned, no HTTP connection accepted). Not `net.Server.maxConnections`, which refuses the
 * newcomer: 16 silent connections, renewed, then left every hello a bare close, never told why.
 */
export const MAX_SHARED_SOCKET_CONNECTIONS = 16;

/**
 * The longest first line the shared socket reads: a hello's id is all its refusal needs. A longer
 * line closes the connection without a word (a hello with a card this large gets no refusal, only
 * the close). At the frame cap (33 MiB) each connection could hold its unfinished line until the
 * hello timeout.
 */
export const SHARED_SOCKET_LINE_BYTES = 64 * 1024;

/** What a hello on the shared socket is told. */
export const SHARED_SOCKET_REFUSAL = "a worker's connection is made by the broker that spawns it; this socket admits no one";

export interface ParticipantSocket {
  path: string;
  close(): Promise<void>;
}

export interface ParticipantSocketOptions {
  /** How long a connection may stay silent (default 5 s). */
  helloTimeoutMs?: number;
  /** How long a refused peer has to read the error and close its end (default 5 s). */
  closeGraceMs?: number;
  /** Where the socket's own troubles (a failed accept, say) are logged. */
  log?: (message: string) => void;
}

/**
 * The shared participant socket: bound in the owner-only runtime directory and refusing every
 * connection, so that no local process can register under a name the broker is about to route a
 * task to. A hello gets a `refused` error under its id, then the connection ends; any other
 * first line, or silence past the timeout, closes it without a word.
 */
export async function withParticipantSocket(dir: string, options: ParticipantSocketOptions = {}): Promise<ParticipantSocket> {
  // The socket path must fit sun_path as a whole: checked for this file name, before anything is made.
  const path = join(ensureRuntimeDir(dir, { socketFile: PARTICIPANT_SOCKET_FILE }), PARTICIPANT_SOCKET_FILE);
  const open = new Set<Socket>();
  /** The connections whose first line is read: never closed to make room (their refusal is on its way). */
  const spoke = new WeakSet<Socket>();
  const server = createServer((socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    refuseConnection(socket, options, () => spoke.add(socket));
  });
  // Spent: its refusal is written and flushed (the writable side finished), so closing it loses
  // nothing: the peer reads the refusal from its own buffer. It is held only for the peer to close;
  // 16 peers that never close, renewed, otherwise left every newcomer a bare close.
  capConnections(server, MAX_SHARED_SOCKET_CONNECTIONS, (socket) => spoke.has(socket), (socket) => socket.writableFinished);
  // Clearing a crashed launch's leftover and binding are done holding `participant.sock.lock`:
  // two starts at once both found the leftover dead and both unlinked it, the later unlink taking
  // the earlier one's fresh socket. Holding the lock, the second finds the first's socket live.
  await bindOwnSocket(path, server);
  // Once bound, an error (an accept failing for want of descriptors, say) is logged: any local
  // process may open connections here, and none of that may take the broker down.
  const log = options.log ?? ((message: string) => console.warn(`fabric: participant socket: ${message}`));
  server.on('error', (err) => log(err.message));
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

/**
 * Refuses one connection to the shared socket (any duplex stream): a hello gets `refused` under
 * its id, written and flushed before the stream closes (the same `OutboundQueue.finish` a spawned
 * connection's refused hello goes through); any other first line, or silence past the timeout,
 * closes it with no reply, as does a first line over `SHARED_SOCKET_LINE_BYTES`. Nothing after the
 * first line is read; `spoke` is called once it is.
 */
export function refuseConnection(stream: Duplex, options: ParticipantSocketOptions = {}, spoke?: () => void): void {
  const codec = FrameCodec.forBroker({ maxFrameBytes: SHARED_SOCKET_LINE_BYTES, log: () => {} });
  const queue = new OutboundQueue(stream);
  const gone = new Error('refused');
  let decided = false;
  const timer = setTimeout(() => {
    decided = true;
    queue.stop(gone);
    stream.destroy();
  }, options.helloTimeoutMs ?? SHARED_SOCKET_HELLO_TIMEOUT_MS);
  stream.on('error', () => stream.destroy());
  stream.on('close', () => clearTimeout(timer));
  stream.on('data', (chunk: Buffer) => {
    if (decided) return;
    const first = codec.push(chunk)[0];
    if (!first) return;
    decided = true;
    clearTimeout(timer);
    codec.close('refused');
    spoke?.();
    if (first.type === 'message' && first.frame.method === 'session.hello') {
      const line = codec.fail(first.frame.id, wireError({ kind: 'refused', reason: SHARED_SOCKET_REFUSAL }));
      void queue.finish(gone, line, options.closeGraceMs ?? CLOSE_GRACE_MS);
    } else {
      queue.stop(gone);
      stream.destroy();
    }
  });
}
