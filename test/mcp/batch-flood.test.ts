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
const timed = async <T>(work: Promise<T>): Promise<{ value: T; ms: number }> => {
  const started = performance.now();
  const value = await work;
  return { value, ms: performance.now() - started };
};

describe('a batch over the entry cap', () => {
  test('200,000 invalid entries (400 KB): refused 400 with the single -32600, and an honest ping beside it answered promptly', async () => {
    // Before: ~8 s of main thread for this body (and a 16 MB answer); the bound is an order of magnitude under.
    const hostile = timed(gw.post('/mcp/echo', batchOf(200_000, '1')));
    const honest = timed(gw.post('/mcp/echo', { jsonrpc: '2.0', id: 'honest', method: 'ping' }));
    const [h, p] = await Promise.all([hostile, honest]);
    assert.equal(h.value.status, 400);
    assert.deepEqual(JSON.parse(h.value.body), REFUSAL);
    assert.equal(p.value.status, 200);
    assert.deepEqual(JSON.parse(p.value.body), { jsonrpc: '2.0', id: 'honest', result: {} });
    assert.ok(h.ms < 800, `the hostile body took ${h.ms.toFixed(0)} ms`);
    assert.ok(p.ms < 800, `the honest ping took ${p.ms.toFixed(0)} ms`);
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
