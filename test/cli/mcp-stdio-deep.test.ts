import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TOO_DEEP_MESSAGE } from '../../main/jsonrpc/index.js';
import { startMcpGateway, type McpGateway } from '../mcp/helpers.js';
import { stdioBridge } from './mcp-stdio-bridge.js';

/**
 * `mcp-stdio` and one valid request nested deeper than JSON.stringify can encode (16 KB of
 * brackets): before, the encode's RangeError was taken for "stdout is closed", every call in flight
 * was abandoned and the bridge exited 1. Then that line alone was answered the bridge's -32000
 * under its id. Now it is past main/jsonrpc's nesting cap (1,000 levels) and never parsed nor
 * re-encoded: the bridge answers it itself (70b9c1a) with the Invalid Request the gateway also
 * gives (-32600, 'nested too deeply') under its id,
 * and the session goes on (test/cli/mcp-stdio-nesting.test.ts has the 10 MiB line).
 */
let gw: McpGateway;
before(async () => {
  gw = await startMcpGateway(['spin']);
});
after(() => gw.close());

test('a request nested 100,000 deep is answered an error under its id; the call in flight and the next line are served, exit 0', { timeout: 180_000 }, async () => {
  const b = stdioBridge(gw.runtimeDir, 'spin');

  b.write({ jsonrpc: '2.0', id: 'running', method: 'tools/call', params: { name: 'loop', arguments: {} } });
  while (gw.registry.get('spin')!.runningCallId !== 'running') await new Promise((resolve) => setImmediate(resolve));
  const depth = 100_000;
  b.writeRaw(`{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"loop","arguments":{"x":${'['.repeat(depth)}${']'.repeat(depth)}}}}\n`);
  const deep = await b.next();
  assert.equal(deep.id, 'deep');
  assert.equal(deep.error?.code, -32600);
  assert.equal(deep.error?.message, TOO_DEEP_MESSAGE);
  b.write({ jsonrpc: '2.0', id: 'after', method: 'ping' });
  assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 'after', result: {} });
  b.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'running', reason: 'done' } });
  const running = await b.next();
  assert.equal(running.id, 'running');
  assert.equal(running.error?.code, -32800, 'the call in flight was still the client’s to cancel');
  assert.deepEqual(await b.finish(), { code: 0, stderr: '' });
});
