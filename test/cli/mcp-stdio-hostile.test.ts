import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startMcpGateway, type McpGateway } from '../mcp/helpers.js';
import { stdioBridge } from './mcp-stdio-bridge.js';

/**
 * `mcp-stdio` against a client that pushes its luck: the bridge in this process
 * (runMcpStdio on PassThrough streams), a real gateway with the spinning `loop` fixture.
 */
let gw: McpGateway;
before(async () => {
  gw = await startMcpGateway(['spin']);
});
after(() => gw.close());

const bridge = () => stdioBridge(gw.runtimeDir, 'spin');

/** Resolves once the spin module's guest runs no call (a cancelled one stops a moment after its answer). */
async function guestStopped(): Promise<void> {
  while (gw.registry.get('spin')!.runningCallId !== undefined) await new Promise((resolve) => setImmediate(resolve));
}

const loop = (id: number | string, pad = '') => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'loop', arguments: { pad } } });
const cancelled = (requestId: number | string) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'stop' } });

test('a cancellation sent right behind its call (which the gateway may read first) still stops the call: answered -32800, the guest stopped', { timeout: 180_000 }, async () => {
  const b = bridge();
  // A big call and its cancellation in one write: the cancellation's POST is read by the gateway first.
  b.write(loop('early', 'x'.repeat(2 * 1024 * 1024)), cancelled('early'));
  const answer = await b.next();
  assert.equal(answer.id, 'early');
  assert.equal(answer.error?.code, -32800);
  assert.deepEqual(await b.finish(), { code: 0, stderr: '' });
  await guestStopped();
});

test('a second initialize while a call runs (a new session) does not strand the call: its cancellation still stops it', { timeout: 180_000 }, async () => {
  const b = bridge();
  const initialize = (id: number) => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
  b.write(initialize(1));
  assert.equal((await b.next()).id, 1);
  b.write(loop('first-session'));
  while (gw.registry.get('spin')!.runningCallId !== 'first-session') await new Promise((resolve) => setImmediate(resolve));
  // The gateway scopes cancellation by session; the second initialize gives the bridge a new one.
  b.write(initialize(2));
  assert.equal((await b.next()).id, 2);
  b.write(cancelled('first-session'));
  const answer = await b.next();
  assert.equal(answer.id, 'first-session');
  assert.equal(answer.error?.code, -32800);
  assert.deepEqual(await b.finish(), { code: 0, stderr: '' });
  await guestStopped();
});

test('two requests in flight under one id (a client bug): a cancellation of that id stops both, each answered -32800', { timeout: 180_000 }, async () => {
  const b = bridge();
  b.write(loop('dup'));
  while (gw.registry.get('spin')!.runningCallId !== 'dup') await new Promise((resolve) => setImmediate(resolve));
  b.write(loop('dup')); // waits behind the first in the module's queue
  b.write(cancelled('dup'));
  const answers = [await b.next(), await b.next()];
  assert.deepEqual(answers.map((a) => [a.id, a.error?.code]), [['dup', -32800], ['dup', -32800]]);
  assert.deepEqual(await b.finish(), { code: 0, stderr: '' });
  await guestStopped();
});
