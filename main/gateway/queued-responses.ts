import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Responses queued behind the one on their connection (HTTP pipelining), by connection. Node tells
 * only the response on the socket that its connection closed (its 'close'); one queued behind it
 * never learns, so before, its call ran on (outside any connection slot), its body stayed held
 * among the bodies, and the answer it wrote was held by the unsent-bytes ledger for good.
 */
const queuedOn = new WeakMap<Socket, Set<ServerResponse>>();

/**
 * Called for a response queued behind another on `socket`: when the connection closes before it
 * reached the socket, it is told as Node tells the one on the socket (destroyed, then 'close'),
 * so its route cancels what it runs and writes nothing more. One 'close' listener a connection.
 */
export function toldWhenConnectionCloses(res: ServerResponse, socket: Socket): void {
  let queued = queuedOn.get(socket);
  if (queued === undefined) {
    const responses = new Set<ServerResponse>();
    queuedOn.set(socket, responses);
    socket.once('close', () => {
      // One that reached the socket is Node's to tell (and a finished one was told already).
      for (const each of responses) if (each.socket === null && !each.destroyed) closeQueued(each);
      responses.clear();
    });
    queued = responses;
  }
  for (const each of queued) if (each.destroyed) queued.delete(each); // finished: Node marks it so at its 'close'
  queued.add(res);
}

/** What Node does for the response on a socket that closes (`onServerResponseClose`). */
function closeQueued(res: ServerResponse): void {
  res.destroyed = true;
  res.emit('close');
}
