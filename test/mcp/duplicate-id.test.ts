/**
 * Two calls in flight under one id (a batch holding it twice, or two POSTs of one session): the
 * in-flight table kept one signal per (peer, id), so a closed connection or a
 * `notifications/cancelled` reached only the later call and the earlier one ran on, holding the
 * module's engine, after its client had gone. Now every call under the id is stopped.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { InflightCalls } from '../../main/gateway/mcp/inflight-calls.js';
import { STREAMABLE_HEADERS, startMcpGateway, type McpGateway } from './helpers.js';

let gw: McpGateway;
before(async () => {
  gw = await startMcpGateway(['spin']);
});
after(() => gw.close());

const loop = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'loop', arguments: {} } });
const turn = () => new Promise((resolve) => setImmediate(resolve));
const running = () => gw.registry.get('spin')!.runningCallId;

/** A POST left open (its answer never read); returns the request to destroy. */
function openPost(body: object, session?: string) {
  const req = request({
    socketPath: gw.socketPath,
    method: 'POST',
    path: '/mcp/spin',
    headers: { ...gw.auth, ...STREAMABLE_HEADERS, ...(session ? { 'mcp-session-id': session } : {}) },
    agent: false,
  });
  req.on('error', () => {});
  req.end(JSON.stringify(body));
  return req;
}

test('InflightCalls: cancel reaches every call under one (peer, id), and each end() forgets only its own', () => {
  const calls = new InflightCalls();
  const first = calls.begin('p', 7);
  const second = calls.begin('p', 7);
  const other = calls.begin('p', 8);
  assert.equal(calls.cancel('p', 7, 'why'), true);
  assert.equal(first.signal.aborted, true);
  assert.equal(second.signal.aborted, true);
  assert.equal(other.signal.aborted, false);
  second.end();
  assert.equal(calls.has('p', 7), true, 'the first is still running');
  first.end();
  assert.equal(calls.has('p', 7), false);
  calls.cancelPeer('p', 'gone');
  assert.equal(other.signal.aborted, true);
});

test('a batch with two calls under one id whose connection closes: both are stopped', { timeout: 180_000 }, async () => {
  const req = openPost([loop(7), loop(7)]);
  while (running() !== '7') await turn();
  req.destroy();
  // Before: only the second (waiting) call was cancelled; the first spun on to the module's 60 s limit.
  while (running() !== undefined) await turn();
});

test('two POSTs of one session under one id, then notifications/cancelled for it: both are stopped', { timeout: 180_000 }, async () => {
  const a = openPost(loop(9), 'dup-session');
  while (running() !== '9') await turn();
  const b = openPost(loop(9), 'dup-session');
  // The second is in flight (waiting for the engine) once the credit meter has seen it.
  while (gw.metered.filter((c) => c.callId === '9').length < 2) await turn();
  const cancelled = await gw.post('/mcp/spin', { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9, reason: 'stop' } }, { 'mcp-session-id': 'dup-session' });
  assert.equal(cancelled.status, 202);
  while (running() !== undefined) await turn();
  a.destroy();
  b.destroy();
});
