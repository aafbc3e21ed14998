import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { formatSseComment, formatSseEvent, formatSseMessage, type TransportFrame } from '../../jsonrpc/index.js';

/** A legacy SSE stream gets a comment line every 15 s to keep it alive. */
export const SSE_KEEP_ALIVE_MS = 15_000;
/** A client that stops reading loses its session once this much is waiting to be sent to it. */
export const MAX_SSE_BACKLOG_BYTES = 16 * 1024 * 1024;

const KEEP_ALIVE = formatSseComment();

/** One legacy HTTP+SSE session (MCP 2024-11-05): a stream that carries the answers to its POSTs. */
export class SseSession {
  private readonly timer: NodeJS.Timeout;
  private open = true;
  /** Requests posted on the session whose answers are not sent yet (at most `MAX_REQUESTS_IN_FLIGHT`). */
  callsInFlight = 0;

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

  private write(chunk: string): void {
    if (!this.open || this.res.writableEnded) return;
    if (this.res.writableLength > MAX_SSE_BACKLOG_BYTES) {
      this.res.destroy();
      return;
    }
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

  constructor(private readonly keepAliveMs: number = SSE_KEEP_ALIVE_MS) {}

  /**
   * Starts the event stream on `res` (200, `text/event-stream`) and sends the `endpoint` event,
   * whose path carries the new session's id (32 hex characters).
   */
  open(module: string, res: ServerResponse): SseSession {
    const id = randomBytes(16).toString('hex');
    const session = new SseSession(id, module, res, this.keepAliveMs, (s) => {
      if (this.sessions.get(s.id) !== s) return;
      this.sessions.delete(s.id);
      this.events.emit('session', { id: s.id, module: s.module, state: 'closed' } satisfies SseSessionEvent);
    });
    this.sessions.set(id, session);
    this.events.emit('session', { id, module, state: 'open' } satisfies SseSessionEvent);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform' });
    session.sendEndpoint(`/mcp/${encodeURIComponent(module)}/sse?sessionId=${id}`);
    return session;
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
