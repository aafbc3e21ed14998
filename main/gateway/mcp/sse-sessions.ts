import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { formatSseComment, formatSseEvent, formatSseMessage, type TransportFrame } from '../../jsonrpc/index.js';

/** A legacy SSE stream gets a comment line every 15 s to keep it alive. */
export const SSE_KEEP_ALIVE_MS = 15_000;
/**
 * A client that stops reading loses its session when a write would leave more than this waiting to
 * be sent to it. All streams together are held under the gateway's one cap on unsent bytes
 * (`MAX_UNSENT_BYTES`, main/gateway/unsent), with every other response.
 */
export const MAX_SSE_BACKLOG_BYTES = 16 * 1024 * 1024;
/**
 * Legacy SSE sessions one gateway holds open at once (each holds a connection and a timer). Past
 * it a GET closes the session idle longest when that is past `SSE_IDLE_MS`, else it is refused 503.
 */
export const MAX_SSE_SESSIONS = 64;
/**
 * A session whose client has sent nothing (no POST) for this long, with no call in flight, may be
 * closed to let a new session in when all are open. Keep-alives read do not count: a holder that
 * only reads them would keep legacy clients out for ever.
 */
export const SSE_IDLE_MS = 5 * 60_000;

const KEEP_ALIVE = formatSseComment();

/** One legacy HTTP+SSE session (MCP 2024-11-05): a stream that carries the answers to its POSTs. */
export class SseSession {
  private readonly timer: NodeJS.Timeout;
  private open = true;
  /** Requests posted on the session whose answers are not sent yet (at most `MAX_REQUESTS_IN_FLIGHT`). */
  callsInFlight = 0;
  /** When the session opened or its client last posted a message on it. */
  lastMessageAt = performance.now();

  constructor(
    readonly id: string,
    readonly module: string,
    private readonly res: ServerResponse,
    keepAliveMs: number,
    onClose: (session: SseSession) => void,
  ) {
    this.timer = setInterval(() => this.write(KEEP_ALIVE), keepAliveMs);
    this.timer.unref();
    res.on('close', () => {
      this.open = false;
      clearInterval(this.timer);
      onClose(this);
    });
  }

  get isOpen(): boolean {
    return this.open;
  }

  get backlogBytes(): number {
    return this.open ? this.res.writableLength : 0;
  }

  /** The first event: where to POST. */
  sendEndpoint(path: string): void {
    this.write(formatSseEvent({ event: 'endpoint', data: path }));
  }

  /** An answer to one of the session's POSTs, or a notification, as a `message` event. */
  send(frame: TransportFrame): void {
    this.write(formatSseMessage(frame));
  }

  /** Ends the stream; the session is forgotten once the response closes. */
  end(): void {
    if (this.open) this.res.end();
  }

  /** Closes the stream at once, whatever it still holds (its client is not reading). */
  drop(): void {
    if (!this.open) return;
    this.open = false; // at once: its backlog no longer counts, though 'close' comes a tick later
    this.res.destroy();
  }

  private write(chunk: string): void {
    if (!this.open || this.res.writableEnded) return;
    const bytes = Buffer.byteLength(chunk);
    if (this.res.writableLength + bytes > MAX_SSE_BACKLOG_BYTES) return this.drop();
    this.res.write(chunk);
  }
}

/** A legacy SSE session opened or ended (its stream closed, whoever closed it). */
export interface SseSessionEvent {
  readonly id: string;
  readonly module: string;
  readonly state: 'open' | 'closed';
}

export type SseSessionListener = (event: SseSessionEvent) => void;

/** The open legacy SSE sessions of one gateway, by id. A session lives exactly as long as its stream. */
export class SseSessions {
  private readonly sessions = new Map<string, SseSession>();
  private readonly events = new EventEmitter();

  constructor(
    private readonly keepAliveMs: number = SSE_KEEP_ALIVE_MS,
    private readonly idleMs: number = SSE_IDLE_MS,
  ) {}

  /**
   * Starts the event stream on `res` (200, `text/event-stream`) and sends the `endpoint` event,
   * whose path carries the new session's id (32 hex characters).
   */
  open(module: string, res: ServerResponse): SseSession {
    const id = randomBytes(16).toString('hex');
    const session = new SseSession(id, module, res, this.keepAliveMs, (s) => this.forget(s));
    this.sessions.set(id, session);
    this.events.emit('session', { id, module, state: 'open' } satisfies SseSessionEvent);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform' });
    session.sendEndpoint(`/mcp/${encodeURIComponent(module)}/sse?sessionId=${id}`);
    return session;
  }

  /**
   * Room for one more session: when all `MAX_SSE_SESSIONS` are open, closes the one whose client
   * has sent nothing for longest if that is at least the idle limit and it has no call in flight.
   * False when none may go: the GET is refused with `sseSessionsFullMessage`.
   */
  makeRoomForSession(): boolean {
    if (this.sessions.size < MAX_SSE_SESSIONS) return true;
    let idlest: SseSession | undefined;
    for (const session of this.sessions.values()) {
      if (session.callsInFlight === 0 && session.lastMessageAt < (idlest?.lastMessageAt ?? Infinity)) idlest = session;
    }
    if (!idlest || performance.now() - idlest.lastMessageAt < this.idleMs) return false;
    // Forgotten now (its 'close' comes later); a stream with nothing waiting ends cleanly.
    this.forget(idlest);
    if (idlest.backlogBytes === 0) idlest.end();
    else idlest.drop();
    return true;
  }

  private forget(session: SseSession): void {
    if (this.sessions.get(session.id) !== session) return;
    this.sessions.delete(session.id);
    this.events.emit('session', { id: session.id, module: session.module, state: 'closed' } satisfies SseSessionEvent);
  }

  get(id: string): SseSession | undefined {
    return this.sessions.get(id);
  }

  /** Sessions as they open and close; returns the unsubscribe function. */
  subscribe(listener: SseSessionListener): () => void {
    this.events.on('session', listener);
    return () => this.events.off('session', listener);
  }

  get size(): number {
    return this.sessions.size;
  }

  get backlogBytes(): number {
    let total = 0;
    for (const session of this.sessions.values()) total += session.backlogBytes;
    return total;
  }

  /** Sends `frame` (a notification) on every open session of `module`; returns how many it went to. */
  broadcast(module: string, frame: TransportFrame): number {
    let sent = 0;
    for (const session of this.sessions.values()) {
      if (session.module !== module || !session.isOpen) continue;
      session.send(frame);
      sent++;
    }
    return sent;
  }

  /** Ends every open stream (the gateway is stopping). */
  endAll(): void {
    for (const session of this.sessions.values()) session.end();
  }
}

/** The refusal of a GET past `MAX_SSE_SESSIONS`. */
export function sseSessionsFullMessage(module: string): string {
  return `too many open SSE sessions: at most ${MAX_SSE_SESSIONS}; close one, or use Streamable HTTP (POST /mcp/${module})`;
}

/** The refusal of a GET read behind another request still unanswered on its connection (HTTP pipelining). */
export function ssePipelinedMessage(module: string): string {
  return `an SSE stream is not opened on a request pipelined behind another on its connection: the requests after it could never be answered; open it on a connection of its own, or use Streamable HTTP (POST /mcp/${module})`;
}
