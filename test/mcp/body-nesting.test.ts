/**
 * An MCP body nesting more than 1,000 levels (main/jsonrpc's nesting cap, the worker wire's own)
 * is refused before JSON.parse builds it: 400 with the Invalid Request (-32600) an invalid body
 * gets, under its top-level id when it has one. Before, a 10 MiB body of `[` held the gateway's
 * main thread ~5.5 s before its Parse error, and a call nesting 100,000 deep was parsed whole.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { EdgeRow } from '../../main/gateway/index.js';
import { TOO_DEEP_MESSAGE } from '../../main/jsonrpc/index.js';
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

const refusal = (id: string | number | null) => ({ jsonrpc: '2.0', id, error: { code: -32600, message: TOO_DEEP_MESSAGE } });
/** A tools/call whose arguments' `a` nests `levels` arrays: the body nests three levels more (message, params, arguments). */
const echoCall = (id: number, levels: number): string =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"a":${'['.repeat(levels)}1${']'.repeat(levels)}}}}`;

describe('a body nested too deeply', () => {
  test('10 MiB of [ is refused 400 -32600 for little more CPU than a ping, and a ping beside it is answered', async () => {
    const ping = { jsonrpc: '2.0', id: 'honest', method: 'ping' };
    const plain = await cpuDuring(() => gw.post('/mcp/echo', ping));
    const body = '['.repeat(10 * 1024 * 1024 - 1);
    const both = await cpuDuring(() => Promise.all([gw.post('/mcp/echo', body), gw.post('/mcp/echo', ping)]));
    const [deep, honest] = both.result;
    assert.equal(deep.status, 400);
    assert.deepEqual(JSON.parse(deep.body), refusal(null));
    assert.deepEqual(JSON.parse(honest.body), { jsonrpc: '2.0', id: 'honest', result: {} });
    const extraMs = both.cpuMs - plain.cpuMs;
    console.log(`# 10 MiB of [ and a ping: ${both.cpuMs.toFixed(0)} ms of CPU, a ping alone ${plain.cpuMs.toFixed(0)} ms`);
    // CPU of this process (gateway and client), not wall-clock: 1.5 s is far under the ~5.5 s it guards.
    assert.ok(extraMs < 1_500, `the deep body cost ${extraMs.toFixed(0)} ms of CPU more than a ping`);
    assert.ok(rows.some((r) => r.status === 400 && r.reason === TOO_DEEP_MESSAGE), 'the refusal row says why');
  });

  test('a call at exactly 1,000 levels runs; one level more is refused under its id and never reaches the module', async () => {
    const served = await gw.post('/mcp/echo', echoCall(1, 997));
    assert.equal(served.status, 200);
    assert.equal(JSON.parse(served.body).result.content[0].text, `{"a":${'['.repeat(997)}1${']'.repeat(997)}}`);
    const metered = gw.metered.length;
    const refused = await gw.post('/mcp/echo', echoCall(2, 998));
    assert.equal(refused.status, 400);
    assert.deepEqual(JSON.parse(refused.body), refusal(2));
    const far = await gw.post('/mcp/echo', echoCall(3, 100_000));
    assert.equal(far.status, 400);
    assert.deepEqual(JSON.parse(far.body), refusal(3));
    assert.equal(gw.metered.length, metered, 'neither refused call reached the module');
  });

  test('legacy SSE: the POST is 202 and the refusal goes on the stream under its id, as for any invalid body', async () => {
    const stream = await SseStream.open(gw.socketPath, '/mcp/echo/sse', gw.auth);
    try {
      const endpoint = (await stream.nextEvent()).data;
      const post = (body: string) => unixRequest(gw.socketPath, { method: 'POST', path: endpoint, headers: { ...gw.auth, 'content-type': 'application/json' }, body });
      assert.equal((await post(echoCall(9, 5_000))).status, 202);
      assert.deepEqual(JSON.parse((await stream.nextEvent()).data), refusal(9));
      assert.equal((await post(JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'ping' }))).status, 202);
      assert.deepEqual(JSON.parse((await stream.nextEvent()).data), { jsonrpc: '2.0', id: 'after', result: {} });
    } finally {
      stream.disconnect();
    }
  });
});
