import type { Server, Socket } from 'node:net';

/**
 * Holds at most `max` of `server`'s connections at once: past it, the oldest connection not yet
 * `proven` is closed, unanswered; when every other one is proven, the oldest `spent` one (its
 * business done: closing it loses nothing); only when none is, the newcomer itself. A socket
 * `proven` and not `spent` is never the one closed to make room.
 *
 * Not `server.maxConnections`, which refuses the newcomer: a local process could then hold every
 * slot with silent connections (reopening each one a timeout closes) and lock honest peers out.
 * The one rule for every local server of ours that anyone running as the user can reach: the
 * gateway's HTTP server (proven: it sent a request with the launch token;
 * `gateway/connection-limits.ts`; spent: it runs no request, idle between requests or its body not yet whole) and the shared participant socket (proven: it sent
 * its first line; spent: its refusal is written and flushed, and only waits for the peer to close;
 * `fabric/admission/participant-socket.ts`).
 */
export function capConnections(server: Server, max: number, proven: (socket: Socket) => boolean, spent?: (socket: Socket) => boolean): void {
  const open = new Set<Socket>();
  /** Not known to be proven when added, oldest first; a proven one is skipped (and dropped) when room is made. */
  const unproven = new Set<Socket>();
  const close = (socket: Socket): void => {
    open.delete(socket); // now: its 'close' comes later, and the next newcomer must not count it
    unproven.delete(socket);
    socket.destroy();
  };
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    unproven.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      unproven.delete(socket);
    });
    if (open.size > max) close(roomMadeBy(socket, open, unproven, proven, spent));
  });
}

/** Which connection goes to make room for `newcomer`: the oldest silent one, else the oldest spent one, else the newcomer. */
function roomMadeBy(newcomer: Socket, open: Set<Socket>, unproven: Set<Socket>, proven: (socket: Socket) => boolean, spent: ((socket: Socket) => boolean) | undefined): Socket {
  for (const socket of unproven) {
    if (socket === newcomer) continue;
    if (!proven(socket)) return socket;
    unproven.delete(socket);
  }
  // Looked for among every open one, not `unproven`: a spent socket was proven first (its hello
  // was read, then refused), so the loop above has already dropped it from `unproven`.
  if (spent) for (const socket of open) if (socket !== newcomer && spent(socket)) return socket;
  return newcomer;
}
