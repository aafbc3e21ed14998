import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** node:http's field for it (internal, the same on Node 20 and 22). */
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

/**
 * The response Node has on a connection now: set from its request's head until the response is
 * sent whole, undefined between requests. With pipelined requests it is the first one's, the one
 * whose answer goes out first.
 */
export function responseOn(socket: Socket): ServerResponse | undefined {
  return (socket as HttpSocket)._httpMessage ?? undefined;
}
