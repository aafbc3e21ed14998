import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { GatewayMiddleware } from '../context.js';

/**
 * What all of a gateway's connections together may hold written and not yet sent (answers, SSE
 * streams, refusals, relayed streams: every response on every route). Node has no write timeout:
 * what a client does not read stays in the gateway (Electron's main process) while its connection
 * is open, and a client could leave ~10 MiB on each of 512 connections.
 */
export const MAX_UNSENT_BYTES = 64 * 1024 * 1024;

/** One connection's responses not yet sent whole, and when its client was last seen reading. */
interface Connection {
  readonly socket: Socket;
  /** Its responses not yet finished: the one on the socket, and any pipelined behind it (held in Node's queue). */
  readonly responses: Set<ServerResponse>;
  /** What it held right after the last write, or when last seen holding less: less again is reading. */
  backlog: number;
  readAt: number;
  /** Its socket was destroyed to make room: counted until its 'close', never chosen again. */
  closing: boolean;
}

type Write = (...args: unknown[]) => unknown;

/** Counted for each write besides its chunk: the response's head goes out with its first one. */
const HEAD_MARGIN_BYTES = 4096;

/**
 * One ledger of the bytes every response has written and its client has not taken, by connection
 * (a response pipelined behind one that never ends, a legacy SSE stream say, has no socket yet:
 * Node holds its body in the response until the one before it ends). Before any write, room is
 * made for it: while all connections together would hold more than `MAX_UNSENT_BYTES`, the
 * connection that has gone longest without reading is closed whole (its socket destroyed, so
 * everything queued on it goes). Never chosen by size: a large answer in transit to a client that
 * reads is not a client that stopped. A connection that held nothing before the write is never
 * chosen for it, so the gateway holds at most the cap plus one write.
 */
export class UnsentBytes {
  private readonly connections = new WeakMap<Socket, Connection>();
  /** Connections with a response in progress, or closing until their socket's 'close'. */
  private readonly holding = new Set<Connection>();
  /**
   * What the open connections held when last summed, plus every write since: never less than
   * they hold now (held bytes grow only by writes), so while it fits nobody needs summing.
   */
  private heldAtMost = 0;

  constructor(private readonly maxBytes: number = MAX_UNSENT_BYTES) {}

  /** Follows every response of the app: mounted first, before anything could write. */
  middleware(): GatewayMiddleware {
    return (ctx, next) => {
      this.follow(ctx.res);
      return next();
    };
  }

  /** Counts `res` under its connection: each write (`write`, `end`, a pipe's) first makes room for itself. */
  follow(res: ServerResponse): void {
    const connection = this.connectionOf(res.req.socket);
    connection.responses.add(res);
    this.holding.add(connection);
    const done = (): void => {
      connection.responses.delete(res);
      if (connection.responses.size === 0 && !connection.closing) this.holding.delete(connection);
    };
    res.once('finish', done);
    res.once('close', done);
    const counted = (original: Write): Write => (...args) => {
      const now = performance.now();
      lookAt(connection, now); // holding nothing before this write: it has read all it was sent
      this.makeRoom(connection, chunkBytes(args[0]), now);
      const result = original.apply(res, args);
      connection.backlog = heldBy(connection);
      return result;
    };
    // Node's own end() does not go through write(), so each write is counted once.
    res.write = counted(res.write as Write) as ServerResponse['write'];
    res.end = counted(res.end as Write) as ServerResponse['end'];
  }

  /** Bytes written and not yet sent, all connections together (a closed one's until its socket has closed). */
  get bytes(): number {
    let total = 0;
    for (const connection of this.holding) total += heldBy(connection);
    return total;
  }

  private connectionOf(socket: Socket): Connection {
    let connection = this.connections.get(socket);
    if (!connection) {
      const created: Connection = { socket, responses: new Set(), backlog: 0, readAt: performance.now(), closing: false };
      socket.once('close', () => this.holding.delete(created));
      this.connections.set(socket, created);
      connection = created;
    }
    return connection;
  }

  /** Closes the connections gone longest without reading until `bytes` more written on `writer` fit. */
  private makeRoom(writer: Connection, bytes: number, now: number): void {
    // The hot path: one addition per write (a response's head, not in `bytes`, gets a margin).
    this.heldAtMost += bytes + HEAD_MARGIN_BYTES;
    if (this.heldAtMost <= this.maxBytes) return;
    let total = bytes;
    for (const connection of this.holding) if (!connection.closing) total += heldBy(connection);
    this.heldAtMost = total + HEAD_MARGIN_BYTES;
    if (total <= this.maxBytes) return;
    while (total > this.maxBytes) {
      let stalest: Connection | undefined;
      for (const connection of this.holding) {
        if (connection.closing) continue;
        const held = lookAt(connection, now);
        if (held > 0 && connection.readAt < (stalest?.readAt ?? Infinity)) stalest = connection;
      }
      if (!stalest) return;
      total -= heldBy(stalest);
      this.heldAtMost = total + HEAD_MARGIN_BYTES;
      stalest.closing = true;
      stalest.socket.destroy();
      if (stalest === writer) return; // its own write goes nowhere now
    }
  }
}

/**
 * What `connection` holds now, noting it read when that is nothing or less than after the last
 * write. (A chunk partly taken still counts whole until Node's write of it completes.)
 */
function lookAt(connection: Connection, now: number): number {
  const held = heldBy(connection);
  if (held === 0 || held < connection.backlog) {
    connection.readAt = now;
    connection.backlog = held;
  }
  return held;
}

/**
 * What a connection holds: its socket's buffer, plus each response's own (a pipelined response's
 * whole body; `writableLength` of the response on the socket counts the socket's buffer too).
 */
function heldBy(connection: Connection): number {
  let held = connection.socket.writableLength;
  for (const res of connection.responses) held += res.writableLength - (res.socket ? res.socket.writableLength : 0);
  return held;
}

function chunkBytes(chunk: unknown): number {
  if (typeof chunk === 'string') return Buffer.byteLength(chunk);
  if (chunk instanceof Uint8Array) return chunk.byteLength;
  return 0;
}
