import type { Socket } from 'node:net';

/** Node's own counters on a socket (node:net internals, the same on Node 20 and 22). */
type CountedSocket = Socket & { _bytesDispatched?: number; _handle?: { writeQueueSize?: number } | null };

/**
 * What the kernel has taken of what was written on `socket` so far (`taken`: what Node handed to
 * libuv less what libuv still queues), and what is written and not yet taken (`waiting`). `taken`
 * grows as the client reads, byte by byte: a chunk partly taken counts the part taken, where
 * `writableLength` counts a chunk whole until all of it is written. Without those internals, what
 * Node's writes completed (a chunk counted once whole).
 */
export function socketDrain(socket: Socket): { taken: number; waiting: number } {
  const counted = socket as CountedSocket;
  const written = socket.bytesWritten ?? 0; // undefined once destroyed
  const taken = typeof counted._bytesDispatched === 'number' ? counted._bytesDispatched - (counted._handle?.writeQueueSize ?? 0) : written - socket.writableLength;
  return { taken, waiting: Math.max(0, written - taken) };
}
