/**
 * `mcp-stdio` and lines nesting more than 1,000 levels (main/jsonrpc's nesting cap): refused
 * without being parsed, answered by the bridge itself (70b9c1a; never posted) with the -32600 the
 * gateway also gives, under the line's top-level id (wherever the client wrote it), and the session
 * goes on. Before, a line of 10 MiB of `[` cost the bridge's parse and then the gateway's, seconds each.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TOO_DEEP_MESSAGE } from '../../main/jsonrpc/index.js';
import { cpuDuring } from '../helpers/cpu-meter.js';
import { startMcpGateway, type McpGateway } from '../mcp/helpers.js';
import { stdioBridge } from './mcp-stdio-bridge.js';

let gw: McpGateway;
before(async () => {
  gw = await startMcpGateway(['echo']);
});
after(() => gw.close());

test('a line of 10 MiB of [ and a call nested 100,000 deep (id last, as the TypeScript SDK writes it) are each answered -32600 at once; a ping after is served, exit 0', { timeout: 180_000 }, async () => {
  const b = stdioBridge(gw.runtimeDir, 'echo');
  b.write({ jsonrpc: '2.0', id: 'warm', method: 'ping' });
  assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 'warm', result: {} });

  const flood = await cpuDuring(async () => {
    b.writeRaw(`${'['.repeat(10 * 1024 * 1024 - 1)}\n`);
    return b.next();
  });
  assert.deepEqual(flood.result, { jsonrpc: '2.0', id: null, error: { code: -32600, message: TOO_DEEP_MESSAGE } });
  console.log(`# 10 MiB of [ through the bridge and the gateway: ${flood.cpuMs.toFixed(0)} ms of CPU`);
  // CPU of this process (bridge and gateway both), not wall-clock: far under the seconds it guards.
  assert.ok(flood.cpuMs < 2_000, `${flood.cpuMs.toFixed(0)} ms of CPU`);

  const depth = 100_000;
  b.writeRaw(`{"method":"tools/call","params":{"name":"echo","arguments":{"x":${'['.repeat(depth)}${']'.repeat(depth)}}},"jsonrpc":"2.0","id":"deep"}\n`);
  assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 'deep', error: { code: -32600, message: TOO_DEEP_MESSAGE } });

  b.write({ jsonrpc: '2.0', id: 'after', method: 'ping' });
  assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 'after', result: {} });
  assert.deepEqual(await b.finish(), { code: 0, stderr: '' });
});
