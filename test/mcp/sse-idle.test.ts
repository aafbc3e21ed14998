/**
 * Legacy SSE sessions never expired: a token holder that opened 63 sessions and read their
 * keep-alives had every later legacy client refused 503 for as long as it liked. Now, when all
 * MAX_SSE_SESSIONS are open, a new GET closes the session whose client has sent nothing for
 * longest, once that is at least the idle limit (`sseIdleMs`, 5 minutes; set here) and it has
 * no call in flight; while every session is in use the GET is still refused 503.
 */
import assert from 'node:assert/strict';
import { createConnection, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { MAX_SSE_SESSIONS, SSE_IDLE_MS } from '../../main/gateway/mcp/index.js';
import { unixRequest } from '../helpers/http.js';
import { startMcpGateway, type McpGateway } from './helpers.js';

/*
 * Two gateways, so no step depends on how long another takes (opening the 64 sessions took over
 * 6 s at load 30, and a 2 s limit then let the first GET close one): one whose limit no test run
 * reaches (10 minutes), where a full set of sessions never yields to a GET, and one whose limit
 * (1 ms) every session is past by the time a GET comes, where the idlest one yields.
 */
const NEVER_IDLE_MS = 10 * 60_000;
const ALWAYS_IDLE_MS = 1;
let gw: McpGateway;
before(async () => {
  gw = await startMcpGateway(['echo'], { sseIdleMs: NEVER_IDLE_MS });
});
after(() => gw.close());

/** A gateway with the idle limit given, and the ids of the sessions it closes. */
async function gatewayWithIdleLimit(sseIdleMs: number): Promise<{ gateway: McpGateway; closed: string[] }> {
  const gateway = await startMcpGateway(['echo'], { sseIdleMs });
  const closed: string[] = [];
  gateway.gateway.onSseSession((event) => {
    if (event.state === 'closed') closed.push(event.id);
  });
  return { gateway, closed };
}

/** A legacy session whose client reads its endpoint event and keeps the stream open. */
async function session(gw: McpGateway): Promise<{ id: string; endpoint: string; socket: Socket }> {
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
function getSseStatus(gw: McpGateway): Promise<number> {
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

/** MAX_SSE_SESSIONS sessions opened one after another, the first opened first. */
async function fill(gw: McpGateway): Promise<{ id: string; endpoint: string; socket: Socket }[]> {
  const held: { id: string; endpoint: string; socket: Socket }[] = [];
  for (let i = 0; i < MAX_SSE_SESSIONS; i++) held.push(await session(gw));
  return held;
}

test('when all sessions are open and none is idle past the limit, a new GET is refused 503', { timeout: 180_000 }, async () => {
  const held = await fill(gw);
  try {
    assert.equal(await getSseStatus(gw), 503);
    assert.equal(gw.gateway.openSseSessions, MAX_SSE_SESSIONS);
  } finally {
    for (const { socket } of held) socket.destroy();
  }
});

test('when all sessions are open, a new GET closes the one idle longest past the limit, not one that just sent', { timeout: 180_000 }, async () => {
  const { gateway, closed } = await gatewayWithIdleLimit(ALWAYS_IDLE_MS);
  const held = await fill(gateway);
  try {
    // The first opened has just sent a message: no longer the idlest; the second is.
    const ping = await unixRequest(gateway.socketPath, { method: 'POST', path: held[0]!.endpoint, headers: { ...gateway.auth, 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    assert.equal(ping.status, 202);
    held.push(await session(gateway));
    assert.deepEqual(closed, [held[1]!.id], 'the session idle longest was closed, not the one that just sent');
    assert.equal(gateway.gateway.openSseSessions, MAX_SSE_SESSIONS);
  } finally {
    for (const { socket } of held) socket.destroy();
    await gateway.close();
  }
});
