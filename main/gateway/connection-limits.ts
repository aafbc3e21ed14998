import { createServer, type RequestListener, type Server } from 'node:http';

/**
 * How long a client may take to send a request, and how many connections the gateway holds at
 * once. Node's defaults held a connection that sent nothing 89 s and a stalled body 329 s, with no
 * cap on how many: any local process could hold the gateway's file descriptors (which the broker
 * and the plugins need too) until honest clients were refused.
 */
export interface ConnectionLimits {
  /** The request line and headers must be whole within this (a connection that sends nothing included); else 408 and closed. */
  readonly headersTimeoutMs: number;
  /** The whole request, body included, must be in within this; else 408 and closed. Answers and SSE streams are not timed. */
  readonly requestTimeoutMs: number;
  /** Connections held at once; past it a new connection is closed at once, unanswered. */
  readonly maxConnections: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, maxConnections: 512 };

/** The HTTP server with the limits applied; a request without Host (not a browser's) is served, which Node would answer 400. */
export function limitedServer(limits: Partial<ConnectionLimits> | undefined, listener: RequestListener): Server {
  const { headersTimeoutMs, requestTimeoutMs, maxConnections } = { ...DEFAULT_CONNECTION_LIMITS, ...limits };
  const server = createServer(
    {
      requireHostHeader: false,
      headersTimeout: headersTimeoutMs,
      requestTimeout: Math.max(requestTimeoutMs, headersTimeoutMs),
      // How often Node looks for connections past their time (its default, 30 s, would add that much to each).
      connectionsCheckingInterval: Math.min(1_000, Math.max(50, Math.floor(headersTimeoutMs / 4))),
    },
    listener,
  );
  server.maxConnections = maxConnections;
  return server;
}
