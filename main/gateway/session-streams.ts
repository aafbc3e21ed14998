import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { responseOn } from './response-on-socket.js';

/**
 * The responses that are legacy SSE sessions' streams. A session has its own cap (64) and idle
 * rule, so it is never the connection closed for a newcomer at the connection cap
 * (connection-limits.ts); and it ends only when its connection closes, so nothing pipelined behind
 * it on that connection can ever be answered (the guards and the unsent-bytes ledger).
 */
const sessionStreams = new WeakSet<ServerResponse>();

/** Called by the legacy SSE route for the stream it opens. */
export function sessionStream(res: ServerResponse): void {
  sessionStreams.add(res);
}

export function isSessionStream(res: ServerResponse): boolean {
  return sessionStreams.has(res);
}

/**
 * True when `res` (a request's response) is pipelined behind a legacy SSE session's stream on
 * its own connection: its answer could never be delivered.
 */
export function behindSessionStream(res: ServerResponse, socket: Socket): boolean {
  const head = responseOn(socket);
  return head !== undefined && head !== res && sessionStreams.has(head);
}

