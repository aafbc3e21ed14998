/**
 * A batch of invalid entries (`[1,1,…]`, `[{},{},…]`) cost 28–57 µs of the main thread per entry
 * and was not capped: a 400 KB body froze every client for seconds. A batch of more than
 * MAX_BATCH_ENTRIES entries, valid or not, is now refused whole (400, one -32600 under id null)
 * before any entry is looked at, on both transports, and the honest request beside it is answered
 * at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { EdgeRow } from '../../main/gateway/index.js';
import { MAX_BATCH_ENTRIES } from '../../main/jsonrpc/index.js';
import { cpuDuring } from '../helpers/cpu-meter.js';
import { unixRequest } from '../helpers/http.js';
import { startMcpGateway, type McpGateway } from './helpers.js';
import { SseStream } from './sse-reader.js';

let gw: McpGateway;
const rows: EdgeRow[] = [];
before(async () => {
  gw = await startMcpGateway(['echo']);
  gw.gateway.onEdge((row) => rows.push(row));
});
after(async () => {
  await gw.close();
});

const REFUSAL = { jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: a batch of more than ${MAX_BATCH_ENTRIES} entries` } };
const batchOf = (n: number, entry: string): string => `[${Array(n).fill(entry).join(',')}]`;
describe('a batch over the entry cap', () => {
  test('200,000 invalid entries (400 KB): refused 400 with the single -32600, and an honest ping beside it answered, for little more CPU than the ping alone', async () => {
    // Before: ~8 s of main thread for this body (and a 16 MB answer). Measured as the CPU this
    // process (gateway and client alike) spends beyond a ping alone, not as wall-clock time, which
    // a loaded machine stretches: 1.5 s is far under the 8 s it guards, far over the refusal's cost.
    const ping = { jsonrpc: '2.0', id: 'honest', method: 'ping' };
    const plain = await cpuDuring(() => gw.post('/mcp/echo', ping));
    const both = await cpuDuring(() => Promise.all([gw.post('/mcp/echo', batchOf(200_000, '1')), gw.post('/mcp/echo', ping)]));
    const [h, p] = both.result;
    assert.equal(h.status, 400);
    assert.deepEqual(JSON.parse(h.body), REFUSAL);
    assert.equal(p.status, 200);
    assert.deepEqual(JSON.parse(p.body), { jsonrpc: '2.0', id: 'honest', result: {} });
    const extraMs = both.cpuMs - plain.cpuMs;
    console.log(`# the hostile body and a ping: ${both.cpuMs.toFixed(0)} ms of CPU, a ping alone ${plain.cpuMs.toFixed(0)} ms`);
    assert.ok(extraMs < 1_500, `the hostile body cost ${extraMs.toFixed(0)} ms of CPU more than a ping (${both.cpuMs.toFixed(0)} against ${plain.cpuMs.toFixed(0)} ms)`);
    assert.ok(rows.some((r) => r.status === 400 && r.reason === REFUSAL.error.message), 'the refusal row says why');
  });

  test('101 valid calls are refused whole: none of them runs', async () => {
    const before = gw.metered.length;
    const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } });
    const res = await gw.post('/mcp/echo', batchOf(MAX_BATCH_ENTRIES + 1, call));
    assert.equal(res.status, 400);
    assert.deepEqual(JSON.parse(res.body), REFUSAL);
    assert.equal(gw.metered.length, before);
  });

  test('exactly MAX_BATCH_ENTRIES entries are still served', async () => {
    const res = await gw.post('/mcp/echo', batchOf(MAX_BATCH_ENTRIES, '{"jsonrpc":"2.0","method":"notifications/x"}'));
    assert.equal(res.status, 202);
  });

  test('legacy SSE: the POST is refused 400 with the same error, nothing goes on the stream, and the session still serves', async () => {
    const stream = await SseStream.open(gw.socketPath, '/mcp/echo/sse', gw.auth);
    try {
      const endpoint = (await stream.nextEvent()).data;
      const post = (body: string) =>
        unixRequest(gw.socketPath, { method: 'POST', path: endpoint, headers: { ...gw.auth, 'content-type': 'application/json' }, body });
      const refused = await post(batchOf(50_000, '{}'));
      assert.equal(refused.status, 400);
      assert.deepEqual(JSON.parse(refused.body), REFUSAL);
      assert.equal((await post(JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'ping' }))).status, 202);
      const next = await stream.nextEvent();
      assert.deepEqual(JSON.parse(next.data), { jsonrpc: '2.0', id: 'after', result: {} });
    } finally {
      stream.disconnect();
    }
  });
});
