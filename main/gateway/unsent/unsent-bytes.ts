import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { GatewayMiddleware } from '../context.js';
import { behindSessionStream } from '../session-streams.js';
import { socketDrain } from './socket-progress.js';

/**
 * What all of a gateway's connections together may hold written and not yet sent (answers, SSE
 * streams, refusals, relayed streams: every response on every route). Node has no write timeout:
 * what a client does not read stays in the gateway (Electron's main process) while its connection
 * is open, and a client could leave ~10 MiB on each of 512 connections.
 */
export const MAX_UNSENT_BYTES = 64 * 1024 * 1024;

/**
 * How fast a client must take what it was sent (Node has no write deadline): a connection whose
 * socket held unsent bytes when looked at must take, by the next look `windowMs` later, at least
 * `minBytes` or all it held if less, else it is closed. A client that stops reading, or reads one
 * byte a second of a 1 MiB answer, is closed between one and two windows after it falls behind
 * (at most 60 s with the defaults): its answer's memory and its connection slot go with it.
 */
export interface AnswerDrain {
  readonly windowMs: number;
  readonly minBytes: number;
}

/** 64 KiB every 30 s (about 2 KiB a second): any client that reads at all takes far more. */
export const DEFAULT_ANSWER_DRAIN: AnswerDrain = { windowMs: 30_000, minBytes: 64 * 1024 };

/** One connection's responses not yet sent whole, and when its client was last seen reading. */
interface Connection {
  readonly socket: Socket;
  /** Its responses not yet finished: the one on the socket, and any pipelined behind it (held in Node's queue). */
  readonly responses: Set<ServerResponse>;
  /** What it held right after the last write, or when last seen holding less: less again is reading. */
  backlog: number;
  /** When last seen reading, as the ledger's tick: only which came first is ever asked. */
  readAt: number;
  /** Its socket was destroyed to make room: counted until its 'close', never chosen again. */
  closing: boolean;
  /** What its socket had waiting (written, not taken) at the last drain look (`AnswerDrain`), and what the kernel had taken by then. */
  waitingAtLook: number;
  takenAtLook: number;
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
  /**
   * The `ServerResponse` class to create the server with (`http.createServer({ ServerResponse })`):
   * its `write` and `end` count into this ledger. A subclass, so every response keeps one shape
   * (patching `write`/`end` on each instance changed its hidden class) and nothing is registered
   * per response: a response is found done by what it holds when the next one on its connection
   * starts, or when the ledger is summed. ~15% of the main thread a `tools/call` (docs/benchmarks.md).
   */
  readonly Response: CountedResponseClass;
  private readonly connections = new WeakMap<Socket, Connection>();
  /** Connections with a response followed, or closing, until their socket's 'close' (or found holding nothing when summed). */
  private readonly holding = new Set<Connection>();
  /**
   * What the open connections held when last summed, plus every write since: never less than
   * they hold now (held bytes grow only by writes), so while it fits nobody needs summing.
   */
  private heldAtMost = 0;
  /**
   * The ledger's clock: one more at each write and connection followed. Only which connection
   * read longest ago is ever asked, so a counter orders them as the clock did, without a clock
   * read a write on every response's path.
   */
  private tick = 0;
  /** Looks at every followed connection's drain each `drain.windowMs`, while any is followed. */
  private drainLooks: NodeJS.Timeout | undefined;

  constructor(
    private readonly maxBytes: number = MAX_UNSENT_BYTES,
    private readonly drain: AnswerDrain = DEFAULT_ANSWER_DRAIN,
  ) {
    this.Response = countedResponse(this);
  }

  /**
   * Follows the responses of a server not made with `Response` (an embedder serving
   * `buildRouter()` on its own listener): their `write` and `end` are wrapped one by one.
   * Mounted first, before anything could write.
   */
  middleware(): GatewayMiddleware {
    const Counted = this.Response;
    return (ctx, next) => {
      if (!(ctx.res instanceof Counted)) this.wrap(ctx.res);
      return next();
    };
  }

  /**
   * The middleware's door: wraps `res`'s own `write` and `end` with what `Response`'s do
   * (`beforeWrite`, the write, `afterWrite`); each write, a pipe's too, first makes room for itself.
   */
  private wrap(res: ServerResponse): void {
    const counted = (original: Write): Write => (...args) => {
      const connection = this.beforeWrite(res, args[0]);
      const result = original.apply(res, args);
      afterWrite(connection);
      return result;
    };
    res.write = counted(res.write as Write) as ServerResponse['write'];
    res.end = counted(res.end as Write) as ServerResponse['end'];
  }

  /**
   * Before `res` writes `chunk` (through either door): follows `res` under its connection on its
   * first write (nothing is held before one), notes a connection that holds nothing as reading,
   * and makes room. The write is followed by `afterWrite` on the connection returned.
   */
  beforeWrite(res: ServerResponse, chunk: unknown): Connection {
    const socket = res.req.socket;
    let connection = this.connections.get(socket);
    if (!connection || !connection.responses.has(res)) connection = this.follow(res, socket, connection);
    const now = ++this.tick;
    if (behindSessionStream(res, socket)) {
      // Pipelined behind a legacy SSE stream on its connection (past the guards before the stream
      // opened): it could never be sent, so it is not held; the connection goes, stream and all.
      connection.closing = true;
      socket.destroy();
      return connection;
    }
    lookAt(connection, now); // holding nothing before this write: it has read all it was sent
    this.makeRoom(connection, chunkBytes(chunk), now);
    return connection;
  }

  /** Bytes written and not yet sent, all connections together (a closed one's until its socket has closed). */
  get bytes(): number {
    let total = 0;
    for (const connection of this.holding) total += this.heldPruning(connection);
    return total;
  }

  /** Counts `res` under its connection, and lets go of the responses before it there that hold nothing more. */
  private follow(res: ServerResponse, socket: Socket, known: Connection | undefined): Connection {
    let connection = known;
    if (!connection) {
      const created: Connection = { socket, responses: new Set(), backlog: 0, readAt: ++this.tick, closing: false, waitingAtLook: 0, takenAtLook: 0 };
      socket.once('close', () => this.holding.delete(created));
      this.connections.set(socket, created);
      connection = created;
    }
    for (const earlier of connection.responses) if (isDone(earlier)) connection.responses.delete(earlier);
    connection.responses.add(res);
    this.holding.add(connection);
    if (this.drainLooks === undefined) this.drainLooks = setInterval(() => this.lookAtDrains(), this.drain.windowMs).unref();
    return connection;
  }

  /**
   * The write deadline (`AnswerDrain`): closes each connection whose socket had bytes waiting at
   * the last look and still has, its client having taken less than `minBytes` (or all that was
   * waiting) since. Only the socket's own bytes are asked: an answer pipelined behind a request
   * still running waits for the gateway, not for its client.
   */
  private lookAtDrains(): void {
    for (const connection of this.holding) {
      if (connection.closing) continue;
      this.heldPruning(connection);
      const { taken, waiting } = socketDrain(connection.socket);
      const { waitingAtLook, takenAtLook } = connection;
      connection.waitingAtLook = waiting;
      connection.takenAtLook = taken;
      if (waitingAtLook > 0 && waiting > 0 && taken - takenAtLook < Math.min(this.drain.minBytes, waitingAtLook)) {
        connection.closing = true;
        connection.socket.destroy();
      }
    }
    if (this.holding.size > 0) return;
    clearInterval(this.drainLooks);
    this.drainLooks = undefined;
  }

  /** `heldBy`, letting go of done responses (and of the connection, when it holds nothing and is not closing). */
  private heldPruning(connection: Connection): number {
    for (const res of connection.responses) if (isDone(res)) connection.responses.delete(res);
    if (connection.responses.size === 0 && !connection.closing && connection.socket.writableLength === 0) {
      this.holding.delete(connection);
      return 0;
    }
    return heldBy(connection);
  }

  /** Closes the connections gone longest without reading until `bytes` more written on `writer` fit. */
  private makeRoom(writer: Connection, bytes: number, now: number): void {
    // The hot path: one addition per write (a response's head, not in `bytes`, gets a margin).
    this.heldAtMost += bytes + HEAD_MARGIN_BYTES;
    if (this.heldAtMost <= this.maxBytes) return;
    let total = bytes;
    for (const connection of this.holding) if (!connection.closing) total += this.heldPruning(connection);
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
 * The ledger's `ServerResponse` subclass, the server's door: `write` and `end` are `beforeWrite`,
 * the write, `afterWrite`. Node's own `end()` does not go through `write()` (in either door), so
 * each write is counted once.
 */
function countedResponse(ledger: UnsentBytes): CountedResponseClass {
  return class CountedResponse extends ServerResponse {
    override write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
      const connection = ledger.beforeWrite(this, chunk);
      const written = super.write(chunk, encoding as BufferEncoding, callback as WriteCallback);
      afterWrite(connection);
      return written;
    }

    override end(chunk?: unknown, encoding?: unknown, callback?: unknown): this {
      const connection = ledger.beforeWrite(this, chunk);
      super.end(chunk, encoding as BufferEncoding, callback as () => void);
      afterWrite(connection);
      return this;
    }
  };
}

/** After a write: what the connection holds now is its `backlog`, so holding less later is reading. */
function afterWrite(connection: Connection): void {
  connection.backlog = heldBy(connection);
}

/** What `http.createServer`'s `ServerResponse` option takes. */
export type CountedResponseClass = typeof ServerResponse<IncomingMessage>;

type WriteCallback = (error: Error | null | undefined) => void;

/** Ended (or destroyed) and holding nothing of its own: it can never hold bytes again. */
function isDone(res: ServerResponse): boolean {
  return res.destroyed || (res.writableEnded && ownBytes(res) === 0);
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
  for (const res of connection.responses) held += ownBytes(res);
  return held;
}

/** What `res` holds itself, not yet on its socket (`writableLength` counts the socket's buffer too). */
function ownBytes(res: ServerResponse): number {
  return res.writableLength - (res.socket ? res.socket.writableLength : 0);
}

function chunkBytes(chunk: unknown): number {
  if (typeof chunk === 'string') return Buffer.byteLength(chunk);
  if (chunk instanceof Uint8Array) return chunk.byteLength;
  return 0;
}
