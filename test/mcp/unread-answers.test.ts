/**
 * Streamable HTTP answers that are never read: each was written whole to its connection and held
 * there (Node has no write timeout), with no cap on how many, so a client posting 10 MiB batches
 * of pings with large ids on many connections and reading none grew the gateway (Electron's main
 * process) by the size of every answer, up to 512 connections of ~10 MiB. Now all unsent answers
 * together are held up to MAX_UNSENT_ANSWER_BYTES: past it, the connections whose answers have
 * gone longest without being read are closed (a reading client is not chosen for its size).
 */
import assert from 'node:assert/strict';
import { createConnection, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { MAX_UNSENT_ANSWER_BYTES } from '../../main/gateway/mcp/index.js';
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

/** A connection that posts the big batch and reads nothing until `readAll()`, which reads until the gateway closes it or the answer is whole. */
function unreadAnswer(): { socket: Socket; readAll: () => Promise<number> } {
  const socket = createConnection(gw.socketPath);
  socket.pause();
  socket.on('error', () => {});
  socket.write(
    `POST /mcp/echo HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nAccept: application/json, text/event-stream\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BIG_BATCH)}\r\n\r\n${BIG_BATCH}`,
  );
  const readAll = (): Promise<number> =>
    new Promise((resolve) => {
      let bytes = 0;
      socket.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        // Whole: the body ends the batch (the head is small).
        if (bytes > BIG_BATCH.length && chunk.subarray(-2).toString() === '}]') resolve(bytes);
      });
      socket.once('close', () => resolve(bytes));
      socket.resume();
    });
  return { socket, readAll };
}

test('answers nobody reads are held up to the cap, the longest unread closed first; a reading client gets its answer', { timeout: 60_000 }, async () => {
  const count = Math.ceil((MAX_UNSENT_ANSWER_BYTES * 2) / (9 * 1024 * 1024));
  let rows = 0;
  const stop = gw.gateway.onEdge((row) => {
    if (row.path === '/mcp/echo' && row.status === 200) rows++;
  });
  const unread: ReturnType<typeof unreadAnswer>[] = [];
  try {
    for (let i = 0; i < count; i++) {
      unread.push(unreadAnswer());
      // One at a time: each answer is written before the next is asked, so "oldest" is well defined.
      while (rows <= i) await new Promise((resolve) => setImmediate(resolve));
    }
    const held = gw.gateway.unsentAnswerBytes;
    assert.ok(held <= MAX_UNSENT_ANSWER_BYTES + 10 * 1024 * 1024, `the gateway holds ${held} bytes of unread answers`);
    // The first one asked was closed before its answer was sent whole; the last is held whole.
    assert.ok((await unread[0]!.readAll()) < BIG_BATCH.length, 'the oldest unread answer was dropped');
    assert.ok((await unread[count - 1]!.readAll()) > BIG_BATCH.length, 'the newest unread answer is sent whole once read');
    // An honest client that reads gets its whole answer meanwhile.
    const res = await gw.post('/mcp/echo', BIG_BATCH);
    assert.equal(res.status, 200);
    assert.equal((JSON.parse(res.body) as unknown[]).length, 2);
  } finally {
    stop();
    for (const u of unread) u.socket.destroy();
  }
});
