import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import {
  Connection,
  Dispatcher,
  createChannelPair,
  duplexTransport,
  parseFrame,
  serializeFrame,
  streamTransport,
  type FrameTransport,
  type TransportFrame,
} from '../../main/jsonrpc/index.js';

/** Two connected transports, and how to release what they hold. */
export interface TransportPair {
  readonly left: FrameTransport;
  readonly right: FrameTransport;
  readonly dispose: () => Promise<void>;
}

export interface TransportKind {
  readonly name: string;
  readonly open: () => Promise<TransportPair>;
}

/** A connected pair of real Unix sockets; both half-open, so a side can answer after the other's FIN. */
export async function unixSocketPair(): Promise<{ client: net.Socket; server: net.Socket; dispose: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'jsonrpc-'));
  const listener = net.createServer({ allowHalfOpen: true });
  listener.listen(join(dir, 's.sock'));
  await once(listener, 'listening');
  const accepted = once(listener, 'connection');
  const client = net.createConnection({ path: join(dir, 's.sock'), allowHalfOpen: true });
  const [[server]] = await Promise.all([accepted as Promise<[net.Socket]>, once(client, 'connect')]);
  listener.close();
  const dispose = async () => {
    client.destroy();
    server.destroy();
    await rm(dir, { recursive: true, force: true });
  };
  return { client, server, dispose };
}

/** Every transport the protocol layer must behave the same over. */
export const transportKinds: readonly TransportKind[] = [
  {
    name: 'in-process channel',
    open: async () => {
      const [left, right] = createChannelPair();
      return { left, right, dispose: async () => {} };
    },
  },
  {
    name: 'ndjson over a Unix socket',
    open: async () => {
      const { client, server, dispose } = await unixSocketPair();
      return { left: duplexTransport(client), right: duplexTransport(server), dispose };
    },
  },
  {
    name: 'ndjson over PassThrough stream pairs',
    open: async () => {
      const leftToRight = new PassThrough();
      const rightToLeft = new PassThrough();
      return {
        left: streamTransport(rightToLeft, leftToRight),
        right: streamTransport(leftToRight, rightToLeft),
        dispose: async () => {
          leftToRight.destroy();
          rightToLeft.destroy();
        },
      };
    },
  },
];

/** A peer that speaks frames by hand: what it sends is written as given, what it gets is kept as JSON values. */
export class RawPeer {
  private readonly received: unknown[] = [];
  private readonly waiting: Array<(value: unknown) => void> = [];
  readonly ended: Promise<void>;

  constructor(readonly transport: FrameTransport) {
    this.ended = transport.start((frame) => this.accept(frame));
  }

  send(text: string): Promise<void> {
    return this.transport.send(parseFrame(text));
  }

  /** The next frame, as JSON. */
  next(): Promise<unknown> {
    if (this.received.length > 0) return Promise.resolve(this.received.shift());
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Ends this side's output, waits for the other side to finish answering and end, returns the rest. */
  async finish(): Promise<unknown[]> {
    await this.transport.end();
    await this.ended;
    return this.received.splice(0);
  }

  private accept(frame: TransportFrame): void {
    const value: unknown = JSON.parse(serializeFrame(frame));
    const waiter = this.waiting.shift();
    if (waiter) waiter(value);
    else this.received.push(value);
  }
}

/** Serves `dispatcher` on one side of a fresh pair and hands the other side to a RawPeer. */
export async function serveRaw(kind: TransportKind, dispatcher: Dispatcher): Promise<{ server: Connection; peer: RawPeer; dispose: () => Promise<void> }> {
  const pair = await kind.open();
  const server = new Connection(pair.right, dispatcher);
  const peer = new RawPeer(pair.left);
  return { server, peer, dispose: pair.dispose };
}

/** Sends each text, ends the input, and returns everything the server answered before it ended. */
export async function exchange(kind: TransportKind, dispatcher: Dispatcher, ...texts: string[]): Promise<unknown[]> {
  const { peer, server, dispose } = await serveRaw(kind, dispatcher);
  try {
    for (const text of texts) await peer.send(text);
    const answers = await peer.finish();
    await server.closed;
    return answers;
  } finally {
    await dispose();
  }
}

/** Two Connections joined by a fresh pair. */
export async function connectPair(
  kind: TransportKind,
  serverDispatcher: Dispatcher,
  clientDispatcher = new Dispatcher(),
): Promise<{ client: Connection; server: Connection; dispose: () => Promise<void> }> {
  const pair = await kind.open();
  const client = new Connection(pair.left, clientDispatcher);
  const server = new Connection(pair.right, serverDispatcher);
  const dispose = async () => {
    client.close();
    server.close();
    await pair.dispose();
  };
  return { client, server, dispose };
}

export interface Deferred<T> {
  readonly promise: Promise<T>;
  readonly resolve: (value: T) => void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

export const request = (id: number | string | null, method: string, params?: unknown) =>
  JSON.stringify(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });

export const notification = (method: string, params?: unknown) =>
  JSON.stringify(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });

export const result = (id: number | string, value: unknown) => ({ jsonrpc: '2.0', id, result: value });

export const failure = (id: number | string | null, code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } });
