/**
 * Answers that are never read: each was written whole to its connection and held there (Node has
 * no write timeout), so a client posting 10 MiB bodies whose answers repeat their ids on many
 * connections and reading none grew the gateway (Electron's main process) by every answer, up to
 * 512 connections of ~10 MiB. bd602c2 capped the answers of one writer in the MCP routes only: the
 * MCP batch over the in-flight cap and the A2A batch to a name not forwarded (written through
 * Koa's ctx.body) were outside it, and an answer pipelined behind a response that never ends was
 * "evicted" (counted out) while Node still held it. Now every response is counted by connection
 * in one ledger (MAX_UNSENT_BYTES, SSE streams included): past it the connection gone longest
 * without reading is closed whole, so what was queued on it goes.
 */
import assert from 'node:assert/strict';
import { ServerResponse } from 'node:http';
import { createConnection, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MAX_UNSENT_BYTES } from '../../main/gateway/index.js';
import { MAX_REQUESTS_IN_FLIGHT } from '../../main/gateway/mcp/request-cap.js';
import { startMcpGateway, type McpGateway } from './helpers.js';

let gw: McpGateway;
before(async () => {
  gw = await startMcpGateway(['echo']);
});
after(async () => {
  await gw.close();
});

/** A batch of two pings whose ids make an answer of ~9 MiB. */
const BIG_BATCH = JSON.stringify([
  { jsonrpc: '2.0', id: 'a'.repeat(4.5 * 1024 * 1024), method: 'ping' },
  { jsonrpc: '2.0', id: 'b'.repeat(4.5 * 1024 * 1024), method: 'ping' },
]);

/** A ~9.5 MiB batch of `entries` requests of `method`, each with a large id its answer repeats. */
function bigIdBatch(entries: number, method: string): string {
  const idLength = Math.floor((9.5 * 1024 * 1024) / entries);
  return JSON.stringify(Array.from({ length: entries }, (_, i) => ({ jsonrpc: '2.0', id: String(i).padEnd(idLength, 'x'), method })));
}

const auth = (): string => `Authorization: ${gw.auth.authorization}\r\n`;

function post(path: string, body: string): string {
  return (
    `POST ${path} HTTP/1.1\r\nHost: localhost\r\n${auth()}Accept: application/json, text/event-stream\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** A connection that sends `head` and reads nothing until `readAll()`, which reads until the gateway closes it or the answer is whole. */
function unreadConnection(head: string, body: string): { socket: Socket; readAll: () => Promise<number> } {
  const socket = createConnection(gw.socketPath);
  socket.pause();
  socket.on('error', () => {});
  socket.write(head);
  const readAll = (): Promise<number> =>
    new Promise((resolve) => {
      let bytes = 0;
      socket.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        // Whole: the body ends the batch (the head is small).
        if (bytes > body.length && chunk.subarray(-2).toString() === '}]') resolve(bytes);
      });
      socket.once('close', () => resolve(bytes));
      socket.resume();
    });
  return { socket, readAll };
}

/**
 * Opens unread connections on `path`, one at a time (each answer written before the next is
 * asked, so "oldest" is well defined), until they would hold twice the cap.
 */
async function floodUnread(path: string, body: string, head = post(path, body)): Promise<ReturnType<typeof unreadConnection>[]> {
  const count = Math.ceil((MAX_UNSENT_BYTES * 2) / (9 * 1024 * 1024));
  let rows = 0;
  const stop = gw.gateway.onEdge((row) => {
    if (row.path === path && row.method === 'POST') rows++;
  });
  const unread: ReturnType<typeof unreadConnection>[] = [];
  try {
    for (let i = 0; i < count; i++) {
      unread.push(unreadConnection(head, body));
      while (rows <= i) await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    stop();
  }
  return unread;
}

test('answers nobody reads are held up to the cap, the longest unread closed first; a reading client gets its answer', { timeout: 180_000 }, async () => {
  const unread = await floodUnread('/mcp/echo', BIG_BATCH);
  try {
    // The first one asked was closed before its answer was sent whole; the last is held whole.
    assert.ok((await unread[0]!.readAll()) < BIG_BATCH.length, 'the oldest unread answer was dropped');
    const held = gw.gateway.unsentBytes;
    assert.ok(held <= MAX_UNSENT_BYTES + 10 * 1024 * 1024, `the gateway holds ${held} bytes of unread answers`);
    assert.ok((await unread.at(-1)!.readAll()) > BIG_BATCH.length, 'the newest unread answer is sent whole once read');
    // An honest client that reads gets its whole answer meanwhile.
    const res = await gw.post('/mcp/echo', BIG_BATCH);
    assert.equal(res.status, 200);
    assert.equal((JSON.parse(res.body) as unknown[]).length, 2);
  } finally {
    for (const u of unread) u.socket.destroy();
  }
});

for (const [name, path, body] of [
  ['MCP: a batch over MAX_REQUESTS_IN_FLIGHT (each id answered the refusal)', '/mcp/echo', bigIdBatch(MAX_REQUESTS_IN_FLIGHT + 1, 'ping')],
  ['A2A: a batch to a name not forwarded (each id answered -32602)', '/a2a/nosuch', bigIdBatch(100, 'tasks/get')],
] as const) {
  test(`${name}: unread, it is held under the same cap`, { timeout: 180_000 }, async () => {
    const unread = await floodUnread(path, body);
    try {
      const oldest = await unread[0]!.readAll();
      assert.ok(oldest < body.length, `the oldest of ${unread.length} unread answers (~9.5 MiB each) was held and sent whole (${oldest} bytes)`);
      const held = gw.gateway.unsentBytes;
      assert.ok(held <= MAX_UNSENT_BYTES + 10 * 1024 * 1024, `the gateway holds ${held} bytes of unread answers`);
    } finally {
      for (const u of unread) u.socket.destroy();
    }
  });
}

test('an answer pipelined behind a response that never ends (a legacy SSE stream) is freed when its connection is closed for room', { timeout: 180_000 }, async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  // Every Streamable answer the gateway writes, weakly: what is still reachable after a gc is still held.
  const answers: WeakRef<ServerResponse>[] = [];
  const end = ServerResponse.prototype.end;
  ServerResponse.prototype.end = function (this: ServerResponse, ...args: unknown[]) {
    if (this.req.method === 'POST' && this.req.url === '/mcp/echo') answers.push(new WeakRef(this));
    return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as typeof end;
  const sse = `GET /mcp/echo/sse HTTP/1.1\r\nHost: localhost\r\n${auth()}Accept: text/event-stream\r\n\r\n`;
  let unread: ReturnType<typeof unreadConnection>[] = [];
  try {
    unread = await floodUnread('/mcp/echo', BIG_BATCH, sse + post('/mcp/echo', BIG_BATCH));
    // A round trip after the last write: the sockets destroyed in its tick have closed (libuv's close phase of that loop turn).
    assert.equal((await gw.post('/mcp/echo', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }))).status, 200);
    gc();
    let held = 0;
    for (const ref of answers) held += ref.deref()?.writableLength ?? 0;
    assert.ok(
      held <= MAX_UNSENT_BYTES + 10 * 1024 * 1024,
      `${unread.length} unread ~9 MiB answers pipelined behind SSE streams: ${Math.round(held / 2 ** 20)} MiB of them held (cap ${MAX_UNSENT_BYTES / 2 ** 20} MiB); counted ${Math.round(gw.gateway.unsentBytes / 2 ** 20)} MiB`,
    );
    assert.ok(gw.gateway.unsentBytes >= held, `counted ${gw.gateway.unsentBytes} bytes, held ${held}`);
  } finally {
    ServerResponse.prototype.end = end;
    for (const u of unread) u.socket.destroy();
  }
});
