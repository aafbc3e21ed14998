/**
 * Who a message came from, as the Dispatcher's `context.peer`: the scope a request id is unique
 * in, so the scope a `notifications/cancelled` reaches (docs/mcp.md, "Cancellation").
 */

/** A legacy HTTP+SSE session: its calls, its cancellations, its stream's `list_changed`. */
export function ssePeer(sessionId: string): string {
  return `sse:${sessionId}`;
}

/** A Streamable HTTP client that sent `Mcp-Session-Id`: every POST naming it is one peer. */
export function streamablePeer(sessionId: string): string {
  return `http:${sessionId}`;
}

let lonePosts = 0;

/**
 * A Streamable HTTP POST without `Mcp-Session-Id`: a peer of its own, so no other client (nor
 * its own later POSTs) can cancel its call by id; only its connection closing does.
 */
export function lonePostPeer(): string {
  return `post:${++lonePosts}`;
}

/** Only a legacy SSE session has a stream a server notification can be sent on (`list_changed`). */
export function hearsServerNotifications(peer: string | undefined): boolean {
  return peer?.startsWith('sse:') === true;
}
