import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { CallableModule, EdgeRow } from '../../main/gateway/index.js';
import { PluginCallError } from '../../main/plugins/errors.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { unixRequest } from '../helpers/http.js';
import { STREAMABLE_HEADERS } from './helpers.js';
import { SseStream } from './sse-reader.js';

/**
 * A module that refuses a call because it already holds its cap of waiting calls (main/plugins'
 * PluginCallError `busy`, contract C3): Streamable HTTP answers 503 with `Retry-After: 1` and
 * -32000 `busy: …`; on a legacy SSE session (whose POST is 202 before the call runs) the same
 * error goes on the stream.
 */
const BUSY_MESSAGE = 'busy: module crowded has 64 calls waiting; try again later';
let gw: RunningGateway;
const rows: EdgeRow[] = [];
before(async () => {
  const module: CallableModule = {
    name: 'crowded',
    version: '0.1.0',
    description: '',
    protocols: { mcp: true, a2a: false },
    listTools: async () => [],
    invokeTool: async () => {
      throw new PluginCallError('busy', BUSY_MESSAGE);
    },
  };
  gw = await startGateway({ list: () => [module], get: (name) => (name === 'crowded' ? module : undefined) });
  gw.gateway.onEdge((row) => rows.push(row));
});
after(async () => {
  await gw.close();
});

const CALL = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: {} } });

test('a busy module: 503, Retry-After: 1, JSON-RPC -32000 "busy: …", and a refusal row saying so', async () => {
  const res = await unixRequest(gw.socketPath, { method: 'POST', path: '/mcp/crowded', headers: { ...gw.auth, ...STREAMABLE_HEADERS }, body: CALL });
  assert.equal(res.status, 503);
  assert.equal(res.headers['retry-after'], '1');
  assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: 7, error: { code: -32000, message: BUSY_MESSAGE } });
  const row = rows.find((r) => r.path === '/mcp/crowded' && r.method === 'POST');
  assert.equal(row?.status, 503);
  assert.equal(row?.reason, BUSY_MESSAGE);
});

test('a busy module on a legacy SSE session: the POST is 202 and the stream carries -32000 "busy: …"', async () => {
  const stream = await SseStream.open(gw.socketPath, '/mcp/crowded/sse', gw.auth);
  try {
    const endpoint = await stream.nextEvent();
    const res = await unixRequest(gw.socketPath, { method: 'POST', path: endpoint.data, headers: { ...gw.auth, 'content-type': 'application/json' }, body: CALL });
    assert.equal(res.status, 202);
    const answer = await stream.nextEvent();
    assert.equal(answer.event, 'message');
    assert.deepEqual(JSON.parse(answer.data), { jsonrpc: '2.0', id: 7, error: { code: -32000, message: BUSY_MESSAGE } });
  } finally {
    stream.response.destroy();
  }
});
