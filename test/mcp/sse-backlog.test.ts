/**
 * Legacy SSE sessions that are never read: each held up to 16 MiB plus one message, and nothing
 * bounded how many, so 8 unread sessions cost the gateway +275 MB. Now at most MAX_SSE_SESSIONS
 * are open at once (the next GET is refused 503) and all streams together hold at most
 * MAX_UNSENT_BYTES unsent, the one cap of every response (the longest unread are closed to make room); a session
 * that reads is served throughout. Measured as the bytes queued on the streams, not RSS.
 */
import assert from 'node:assert/strict';
import { createConnection, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { MAX_UNSENT_BYTES } from '../../main/gateway/index.js';
import { MAX_SSE_SESSIONS } from '../../main/gateway/mcp/index.js';
import { unixRequest } from '../helpers/http.js';
import { startMcpGateway, type McpGateway } from './helpers.js';
import { SseStream } from './sse-reader.js';

let gw: McpGateway;
before(async () => {
  gw = await startMcpGateway(['echo']);
});
after(async () => {
  await gw.close();
});

/** A legacy session whose client reads its endpoint event, then never another byte. */
async function unreadSession(): Promise<{ endpoint: string; socket: Socket }> {
  const socket = createConnection(gw.socketPath);
  socket.write(`GET /mcp/echo/sse HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nAccept: text/event-stream\r\n\r\n`);
  let text = '';
  const endpoint = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      const match = /data: (\/mcp\/echo\/sse\?sessionId=[0-9a-f]{32})\n/.exec(text);
      if (!match) return;
      socket.off('data', onData);
      socket.pause();
      resolve(match[1]!);
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
  return { endpoint, socket };
}

const postTo = (endpoint: string, body: string) =>
  unixRequest(gw.socketPath, { method: 'POST', path: endpoint, headers: { ...gw.auth, 'content-type': 'application/json' }, body });

describe('unread legacy SSE sessions', () => {
  test('what all unread streams hold stays under the gateway-wide cap; a reading session is still answered', { timeout: 180_000 }, async () => {
    const honest = await SseStream.open(gw.socketPath, '/mcp/echo/sse', gw.auth);
    const honestEndpoint = (await honest.nextEvent()).data;
    const unread = await Promise.all(Array.from({ length: 8 }, unreadSession));
    const bigId = 'x'.repeat(5 * 1024 * 1024);
    let sent = 0;
    try {
      for (let round = 0; round < 3; round++) {
        for (const { endpoint } of unread) {
          const res = await postTo(endpoint, JSON.stringify({ jsonrpc: '2.0', id: bigId, method: 'ping' }));
          if (res.status === 202) sent += bigId.length;
        }
        // The honest session's answer comes after every answer posted before it was written.
        assert.equal((await postTo(honestEndpoint, JSON.stringify({ jsonrpc: '2.0', id: `honest-${round}`, method: 'ping' }))).status, 202);
        assert.deepEqual(JSON.parse((await honest.nextEvent()).data), { jsonrpc: '2.0', id: `honest-${round}`, result: {} });
        const queued = gw.gateway.sseBacklogBytes;
        assert.ok(queued <= MAX_UNSENT_BYTES, `round ${round}: ${queued} bytes queued on SSE streams`);
      }
      assert.ok(sent > MAX_UNSENT_BYTES, `the clients asked for ${sent} bytes of answers`);
    } finally {
      for (const { socket } of unread) socket.destroy();
      honest.disconnect();
    }
  });

  test('a reading session whose answers are in transit is not closed for sessions that stopped reading, however small theirs', { timeout: 180_000 }, async () => {
    while (gw.gateway.openSseSessions > 0) await new Promise((resolve) => setImmediate(resolve));
    const honest = await unreadSession();
    const unread = await Promise.all(Array.from({ length: 6 }, unreadSession));
    const id = (mib: number, c: string): string => c.repeat(mib * 1024 * 1024);
    try {
      // 6 × 8 MiB unread: each smaller than the honest session's answers below.
      for (const { endpoint } of unread) for (let i = 0; i < 2; i++) assert.equal((await postTo(endpoint, JSON.stringify({ jsonrpc: '2.0', id: id(4, 'u'), method: 'ping' }))).status, 202);
      // The honest client reads, at ~4 MiB/s, until the attack is sent; then as fast as it can.
      let text = '';
      let paced = true;
      let taken = 0;
      honest.socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        taken += chunk.length;
        if (paced && taken >= 64 * 1024) {
          taken = 0;
          honest.socket.pause();
          setTimeout(() => honest.socket.resume(), 16);
        }
      });
      honest.socket.resume();
      const closed = new Promise<void>((resolve) => honest.socket.once('close', resolve));
      let isClosed = false;
      void closed.then(() => (isClosed = true));
      // 12 MiB of answers in transit to it (two, each under the body cap).
      for (const c of ['g', 'h']) assert.equal((await postTo(honest.endpoint, JSON.stringify({ jsonrpc: '2.0', id: id(6, c), method: 'ping' }))).status, 202);
      // Over the gateway-wide budget: one session must go.
      assert.equal((await postTo(unread[0]!.endpoint, JSON.stringify({ jsonrpc: '2.0', id: id(5, 'x'), method: 'ping' }))).status, 202);
      paced = false;
      honest.socket.resume();
      const answered = `"id":"${id(6, 'h')}","result":{}}\n\n`;
      while (!text.includes(answered) && !isClosed) await new Promise((resolve) => setImmediate(resolve));
      assert.equal(isClosed, false, 'the reading session was closed');
      assert.ok(text.includes(answered), 'the reading session got its whole answer');
      assert.ok(gw.gateway.openSseSessions < 7, 'an unread session was closed instead');
    } finally {
      for (const { socket } of [honest, ...unread]) socket.destroy();
    }
  });

  test(`at most MAX_SSE_SESSIONS open at once: the next GET is refused 503 with a clear error, and served again once one closes`, { timeout: 180_000 }, async () => {
    assert.equal(MAX_SSE_SESSIONS, 64);
    while (gw.gateway.openSseSessions > 0) await new Promise((resolve) => setImmediate(resolve));
    const held = await Promise.all(Array.from({ length: MAX_SSE_SESSIONS }, unreadSession));
    try {
      const refused = await unixRequest(gw.socketPath, { path: '/mcp/echo/sse', headers: { ...gw.auth, accept: 'text/event-stream' } });
      assert.equal(refused.status, 503);
      assert.deepEqual(JSON.parse(refused.body), { error: `too many open SSE sessions: at most ${MAX_SSE_SESSIONS}; close one, or use Streamable HTTP (POST /mcp/echo)` });
      held.pop()!.socket.destroy();
      while (gw.gateway.openSseSessions >= MAX_SSE_SESSIONS) await new Promise((resolve) => setImmediate(resolve));
      const again = await SseStream.open(gw.socketPath, '/mcp/echo/sse', gw.auth);
      assert.equal(again.status, 200);
      again.disconnect();
    } finally {
      for (const { socket } of held) socket.destroy();
    }
  });
});
