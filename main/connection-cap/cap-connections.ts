import type { Server, Socket } from 'node:net';

/**
 * Holds at most `max` of `server`'s connections at once: past it, the oldest connection not yet
 * `proven` is closed, unanswered (the newcomer itself when every other one is proven). A socket
 * `proven` is never the one closed to make room.
 *
 * Not `server.maxConnections`, which refuses the newcomer: a local process could then hold every
 * slot with silent connections (reopening each one a timeout closes) and lock honest peers out.
 * The one rule for every local server of ours that anyone running as the user can reach: the
 * gateway's HTTP server (proven: it sent a request with the launch token;
 * `gateway/connection-limits.ts`) and the shared participant socket (proven: it sent its first
 * line; `fabric/admission/participant-socket.ts`).
 */
export function capConnections(server: Server, max: number, proven: (socket: Socket) => boolean): void {
  const open = new Set<Socket>();
  /** Not known to be proven when added, oldest first; a proven one is skipped (and dropped) when room is made. */
  const unproven = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    unproven.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      unproven.delete(socket);
    });
    if (open.size > max) closeOldestUnproven(open, unproven, proven);
  });
}

function closeOldestUnproven(open: Set<Socket>, unproven: Set<Socket>, proven: (socket: Socket) => boolean): void {
  for (const socket of unproven) {
    unproven.delete(socket);
    if (proven(socket)) continue;
    open.delete(socket); // now: its 'close' comes later, and the next newcomer must not count it
    socket.destroy();
    return;
  }
}
