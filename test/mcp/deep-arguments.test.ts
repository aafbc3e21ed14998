/**
 * A hostile client's `tools/call` whose arguments are nested deeper than `JSON.stringify` can
 * encode (a body well under the 10 MiB cap): refused by the nesting cap before anything is built
 * (400, -32600 under its id; main/jsonrpc's `MAX_NESTING_DEPTH`), never an "Internal error"
 * reported as a handler crash, and the gateway keeps serving. It was answered -32602 after the
 * whole body had been parsed, before the cap (test/mcp/body-nesting.test.ts has the cap's edges).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startMcpGateway, type McpGateway } from './helpers.js';

let gw: McpGateway;
const errors: unknown[] = [];
before(async () => {
  gw = await startMcpGateway(['echo'], { onError: (err) => errors.push(err) });
});
after(async () => {
  await gw.close();
});

test('tools/call with arguments nested 100 000 deep is 400 -32600 under its id, not a handler crash', async () => {
  const depth = 100_000;
  const body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}}`;
  const res = await gw.post('/mcp/echo', body);
  assert.equal(res.status, 400);
  assert.deepEqual(JSON.parse(res.body), {
    jsonrpc: '2.0',
    id: 7,
    error: { code: -32600, message: 'Invalid Request: nested too deeply (more than 1000 levels)' },
  });
  assert.deepEqual(errors, []);
  const after = await gw.post('/mcp/echo', { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'echo', arguments: { a: [[1]] } } });
  assert.deepEqual(JSON.parse(after.body), { jsonrpc: '2.0', id: 8, result: { content: [{ type: 'text', text: '{"a":[[1]]}' }] } });
});
