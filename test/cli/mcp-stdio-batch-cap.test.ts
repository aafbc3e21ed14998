import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { EdgeRow } from '../../main/gateway/index.js';
import { MAX_BATCH_ENTRIES } from '../../main/jsonrpc/index.js';
import { startMcpGateway, type McpGateway } from '../mcp/helpers.js';
import { stdioBridge } from './mcp-stdio-bridge.js';

/**
 * `mcp-stdio` and a batch over the entry cap (a client needs no token to send one): the bridge
 * answers it itself, at once, with the error the gateway gives, and never sends it; the gateway's
 * main thread never sees it (before: a 400 KB line of `1`s held it for seconds). That it was never
 * posted is read from the gateway's edge rows, not from a wall-clock bound.
 */
let gw: McpGateway;
const rows: EdgeRow[] = [];
before(async () => {
  gw = await startMcpGateway(['echo']);
  gw.gateway.onEdge((row) => rows.push(row));
});
after(() => gw.close());

test('a line holding a batch of 200,000 invalid entries is answered -32600 under id null by the bridge, never sent; the next line is served', { timeout: 180_000 }, async () => {
  const b = stdioBridge(gw.runtimeDir, 'echo');
  b.writeRaw(`[${Array(200_000).fill('1').join(',')}]\n`);
  b.write({ jsonrpc: '2.0', id: 'honest', method: 'ping' });
  assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: a batch of more than ${MAX_BATCH_ENTRIES} entries` } });
  assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 'honest', result: {} });
  assert.deepEqual(await b.finish(), { code: 0, stderr: '' });
  assert.deepEqual(rows.filter((r) => r.method === 'POST').map((r) => r.status), [200], 'only the honest ping was posted');
});
