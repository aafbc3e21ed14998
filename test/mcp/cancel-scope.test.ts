import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startMcpGateway, type McpGateway } from './helpers.js';

/**
 * A request id is unique per client only, so `notifications/cancelled` reaches the calls of its
 * own session and nobody else's: two clients using the same id, one cancels, the other's call
 * completes. A call made with no session (no `Mcp-Session-Id`) is cancelled only by its own
 * connection closing.
 */
let gw: McpGateway;
before(async () => {
  gw = await startMcpGateway(['slow']);
});
after(async () => {
  await gw.close();
});

const slowCall = (id: number, ms: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow', arguments: { ms } } });
const cancelled = (requestId: number) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'mine, not yours' } });

/** Resolves once the credit meter has seen `count` calls with this call-id (each turn of the event loop, no timer). */
async function admitted(callId: string, count: number): Promise<void> {
  while (gw.metered.filter((c) => c.callId === callId).length < count) await new Promise((resolve) => setImmediate(resolve));
}

const completed = (id: number, ms: number) => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: JSON.stringify({ ms }) }] } });

test('two clients without a session, same request id: one cancels, both calls complete (neither can reach the other)', async () => {
  const first = gw.post('/mcp/slow', slowCall(7, 300));
  const second = gw.post('/mcp/slow', slowCall(7, 301));
  await admitted('7', 2);
  assert.equal((await gw.post('/mcp/slow', cancelled(7))).status, 202);
  const [a, b] = await Promise.all([first, second]);
  assert.deepEqual(JSON.parse(a.body), completed(7, 300));
  assert.deepEqual(JSON.parse(b.body), completed(7, 301), "the other client's call was not cancelled");
});

test('a client with a session cancels its call; a sessionless client with the same id completes', async () => {
  const init = await gw.post('/mcp/slow', { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
  const headers = { 'mcp-session-id': String(init.headers['mcp-session-id']) };
  const before = gw.metered.filter((c) => c.callId === '8').length;
  const lone = gw.post('/mcp/slow', slowCall(8, 300));
  const mine = gw.post('/mcp/slow', slowCall(8, 302), headers);
  await admitted('8', before + 2);
  assert.equal((await gw.post('/mcp/slow', cancelled(8), headers)).status, 202);
  const [l, m] = await Promise.all([lone, mine]);
  assert.deepEqual(JSON.parse(m.body).error, { code: -32800, message: 'Request cancelled: notifications/cancelled (mine, not yours)' });
  assert.deepEqual(JSON.parse(l.body), completed(8, 300), 'the sessionless call with the same id was not cancelled');
});
