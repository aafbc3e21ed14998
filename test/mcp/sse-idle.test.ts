/**
 * Legacy SSE sessions never expired: a token holder that opened 63 sessions and read their
 * keep-alives had every later legacy client refused 503 for as long as it liked. Now, when all
 * MAX_SSE_SESSIONS are open, a new GET closes the session whose client has sent nothing for
 * longest, once that is at least the idle limit (`sseIdleMs`, 5 minutes; lowered here) and it has
 * no call in flight; while every session is in use the GET is still refused 503.
 */
import assert from 'node:assert/strict';
import { createConnection, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { MAX_SSE_SESSIONS, SSE_IDLE_MS } from '../../main/gateway/mcp/index.js';
import { unixRequest } from '../helpers/http.js';
import { startMcpGateway, type McpGateway } from './helpers.js';

// Longer than opening MAX_SSE_SESSIONS sessions takes on a loaded machine, so the first GET below
// comes while none is idle yet.
const IDLE_MS = 2_000;
let gw: McpGateway;
const closedIds: string[] = [];
before(async () => {
  gw = await startMcpGateway(['echo'], { sseIdleMs: IDLE_MS });
  gw.gateway.onSseSession((event) => {
    if (event.state === 'closed') closedIds.push(event.id);
  });
});
after(() => gw.close());

/** A legacy session whose client reads its endpoint event and keeps the stream open. */
async function session(): Promise<{ id: string; endpoint: string; socket: Socket }> {
  const socket = createConnection(gw.socketPath);
  socket.write(`GET /mcp/echo/sse HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nAccept: text/event-stream\r\n\r\n`);
  let text = '';
  return new Promise((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const match = /data: (\/mcp\/echo\/sse\?sessionId=([0-9a-f]{32}))\n/.exec(text);
      if (match) resolve({ endpoint: match[1]!, id: match[2]!, socket });
      if (/^HTTP\/1\.1 503/.test(text)) reject(new Error(text));
    });
    socket.once('error', reject);
  });
}

/** The status of a GET of a new session, read from its head (an open stream's body never ends). */
function getSseStatus(): Promise<number> {
  const socket = createConnection(gw.socketPath);
  socket.write(`GET /mcp/echo/sse HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nAccept: text/event-stream\r\n\r\n`);
  let text = '';
  return new Promise((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(text);
      if (status) {
        socket.destroy();
        resolve(Number(status[1]));
      }
    });
    socket.once('error', reject);
  });
}

test('the idle limit is 5 minutes by default', () => {
  assert.equal(SSE_IDLE_MS, 5 * 60_000);
});

test('when all sessions are open, a new GET closes the one idle longest past the limit; sessions in use are kept', { timeout: 180_000 }, async () => {
  const held: { id: string; endpoint: string; socket: Socket }[] = [];
  for (let i = 0; i < MAX_SSE_SESSIONS; i++) held.push(await session());
  try {
    // Not idle long enough yet: refused as before.
    assert.equal(await getSseStatus(), 503);
    await delay(IDLE_MS + 50); // the idle limit is the behaviour under test
    // The oldest has just sent a message: no longer the idlest.
    const ping = await unixRequest(gw.socketPath, { method: 'POST', path: held[0]!.endpoint, headers: { ...gw.auth, 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    assert.equal(ping.status, 202);
    const fresh = await session();
    held.push(fresh);
    assert.deepEqual(closedIds, [held[1]!.id], 'the session idle longest was closed, not the one that just sent');
    assert.equal(gw.gateway.openSseSessions, MAX_SSE_SESSIONS);
  } finally {
    for (const { socket } of held) socket.destroy();
  }
});
