import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { responseOn } from './response-on-socket.js';

/**
 * Closes a kept-alive connection held between requests by empty lines. Node's parser skips a CRLF
 * between messages without beginning one, so its header timeout never starts, and each line
 * resets its keep-alive timeout (an inactivity timer): a client, with the token or without,
 * sending `\r\n` every few seconds held its connection for good. Here a connection with no
 * request on it (no response: between requests) and no byte written to it for longer than a
 * kept-alive client may wait (`server.keepAliveTimeout`) plus the time its next request's head
 * may take (`headersTimeoutMs`) is closed: an honest client has had its next head read by then.
 * One look at each of `connections` (the server's, as the connection cap counts them) every
 * `everyMs`; nothing on a request's path.
 */
export function closeHeldBetweenRequests(server: Server, connections: ReadonlySet<Socket>, headersTimeoutMs: number, everyMs: number): void {
  /** Since when each connection has had no request and no byte written (the look that saw it so first), and its bytes written then. */
  const quietSince = new WeakMap<Socket, { at: number; written: number }>();
  const look = (): void => {
    const now = performance.now();
    const limit = server.keepAliveTimeout + headersTimeoutMs;
    for (const socket of connections) {
      const written = socket.bytesWritten;
      const quiet = quietSince.get(socket);
      // A response on it (a request running, or pipelined), or bytes still being sent: not quiet.
      if (responseOn(socket) !== undefined || socket.writableLength > 0 || quiet === undefined || quiet.written !== written) {
        quietSince.set(socket, { at: now, written });
      } else if (now - quiet.at > limit) {
        socket.destroy();
      }
    }
  };
  const looks = setInterval(look, everyMs).unref();
  server.once('close', () => clearInterval(looks));
}
