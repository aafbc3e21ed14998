import type { Server, Socket } from 'node:net';

/**
 * When every other connection is proven and not spent, a newcomer need not be closed: up to
 * `reserve` newcomers are kept past `max` until they prove themselves (`whenProven` calls the
 * function it is given then; the oldest unproven goes only past `max + reserve`), and a newcomer
 * proven past `max` makes room, cheapest first: the oldest unproven connection, else the oldest
 * spent one, else `victim` (closed by `evict`, which may first tell its client why). Never on a
 * mere connection: a process that cannot prove itself (no token) closes nobody's proven
 * connection, only other unproven ones.
 */
export interface Preemption {
  readonly reserve: number;
  readonly whenProven: (socket: Socket, proven: () => void) => void;
  /**
   * The proven, not spent connection to close for `newcomer`, or none (then it stays past `max`,
   * within the reserve). `pastCap` holds the connections beyond `max` now, oldest first: each
   * came in past it, and none has yet taken a place within it (one does, the oldest first, as soon
   * as a connection within the cap goes).
   */
  readonly victim: (open: ReadonlySet<Socket>, newcomer: Socket, pastCap: ReadonlySet<Socket>) => Socket | undefined;
  /** How `victim` is closed (default: destroyed at once). */
  readonly evict?: (socket: Socket) => void;
}

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
 * `gateway/connection-limits.ts`; spent: it runs no request, idle between requests or its body not yet whole;
 * past the cap a newcomer that proves itself closes the connection whose request has run longest,
 * `Preemption`) and the shared participant socket (proven: it sent
 * its first line; spent: its refusal is written and flushed, and only waits for the peer to close;
 * `fabric/admission/participant-socket.ts`).
 *
 * Returns the server's connections as counted here: the one view of them other rules of the
 * server look at (`closeHeldBetweenRequests`, and what may run past the cap).
 */
export function capConnections(
  server: Server,
  max: number,
  proven: (socket: Socket) => boolean,
  spent?: (socket: Socket) => boolean,
  preempt?: Preemption,
): CappedConnections {
  const open = new Set<Socket>();
  /** Not known to be proven when added, oldest first; a proven one is skipped (and dropped) when room is made. */
  const unproven = new Set<Socket>();
  /**
   * The connections beyond `max` now, oldest first (`open` less these is at most `max`): when one
   * within the cap goes, the oldest of these takes its place. Before, a connection that came in
   * past the cap stayed so for its life, even once it held a place within it.
   */
  const pastCap = new Set<Socket>();
  /** `socket` is no longer counted: a place it held within the cap goes to the oldest past it. */
  const gone = (socket: Socket): void => {
    if (!open.delete(socket)) return;
    unproven.delete(socket);
    if (pastCap.delete(socket)) return;
    for (const first of pastCap) {
      pastCap.delete(first);
      break;
    }
  };
  const close = (socket: Socket): void => {
    gone(socket); // now: its 'close' comes later, and the next newcomer must not count it
    socket.destroy();
  };
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    unproven.add(socket);
    socket.once('close', () => gone(socket));
    if (open.size - pastCap.size > max) pastCap.add(socket);
    if (open.size <= max) return;
    // Past the cap with no spent connection to close: the newcomer waits for its proof, up to
    // `reserve` deep (before, each arrival closed the unproven one before it, so with every slot
    // running a request a process opening connections in a loop kept every newcomer out).
    if (preempt !== undefined && open.size <= max + preempt.reserve && spentOne(socket, open, spent, proven) === undefined) {
      preempt.whenProven(socket, () => {
        if (open.size <= max || !pastCap.has(socket)) return;
        const other = oldestUnproven(socket, unproven, proven) ?? spentOne(socket, open, spent);
        if (other !== undefined) return close(other);
        const victim = preempt.victim(open, socket, pastCap);
        if (victim === undefined) return;
        gone(victim); // gone from the count now; `evict` may let it say why first
        (preempt.evict ?? ((s: Socket) => s.destroy()))(victim);
      });
      return;
    }
    close(roomMadeBy(socket, open, unproven, proven, spent));
  });
  return { open, pastCap };
}

/** A capped server's connections, as `capConnections` counts them. */
export interface CappedConnections {
  /** Each open connection, less those already closed to make room. */
  readonly open: ReadonlySet<Socket>;
  /** Those of them beyond `max` now, oldest first (only with a `Preemption`). */
  readonly pastCap: ReadonlySet<Socket>;
}

/** Which connection goes to make room for `newcomer`: the oldest silent one, else the oldest spent one, else the newcomer. */
function roomMadeBy(newcomer: Socket, open: Set<Socket>, unproven: Set<Socket>, proven: (socket: Socket) => boolean, spent: ((socket: Socket) => boolean) | undefined): Socket {
  return oldestUnproven(newcomer, unproven, proven) ?? spentOne(newcomer, open, spent) ?? newcomer;
}

/** The oldest connection but `newcomer` not yet proven (proven ones met on the way are dropped from `unproven`). */
function oldestUnproven(newcomer: Socket, unproven: Set<Socket>, proven: (socket: Socket) => boolean): Socket | undefined {
  for (const socket of unproven) {
    if (socket === newcomer) continue;
    if (!proven(socket)) return socket;
    unproven.delete(socket);
  }
  return undefined;
}

/** The oldest spent connection but `newcomer`, if any (only among the `proven`, when given). */
function spentOne(newcomer: Socket, open: Set<Socket>, spent: ((socket: Socket) => boolean) | undefined, proven?: (socket: Socket) => boolean): Socket | undefined {
  // Looked for among every open one, not `unproven`: a spent socket was proven first (its hello
  // was read, then refused), so the loop above has already dropped it from `unproven`.
  if (spent) for (const socket of open) if (socket !== newcomer && spent(socket) && (proven === undefined || proven(socket))) return socket;
  return undefined;
}
