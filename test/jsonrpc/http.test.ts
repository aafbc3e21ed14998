import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import {
  Connection,
  Dispatcher,
  RpcError,
  createChannelPair,
  dispatchOnce,
  formatSseComment,
  formatSseEvent,
  formatSseMessage,
  parseFrame,
  serializeFrame,
} from '../../main/jsonrpc/index.js';
import { deferred } from './harness.js';

/** An MCP-shaped handler set, registered once and served by every adapter below. */
function mcpLike(): Dispatcher {
  return new Dispatcher()
    .onRequest('initialize', z.object({ protocolVersion: z.string() }).loose(), ({ protocolVersion }) => ({
      protocolVersion,
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: 'echo', version: '1.0.0' },
    }))
    .onRequest('ping', () => ({}))
    .onRequest('tools/list', () => ({ tools: [{ name: 'echo', description: 'echoes', inputSchema: { type: 'object', properties: {} } }] }))
    .onRequest('tools/call', z.object({ name: z.string(), arguments: z.record(z.string(), z.unknown()).default({}) }), ({ name, arguments: args }, { id }) => {
      if (name !== 'echo') throw RpcError.invalidParams(`unknown tool '${name}'`);
      return { content: [{ type: 'text', text: JSON.stringify({ args, callId: id }) }] };
    })
    .onNotification('notifications/initialized', () => {});
}

const body = async (dispatcher: Dispatcher, text: string) => {
  const answer = await dispatchOnce(dispatcher, parseFrame(text));
  return answer && (JSON.parse(serializeFrame(answer)) as unknown);
};

describe('dispatchOnce (stateless HTTP)', () => {
  test('answers a request with its response frame', async () => {
    assert.deepEqual(await body(mcpLike(), '{"jsonrpc":"2.0","id":1,"method":"ping"}'), { jsonrpc: '2.0', id: 1, result: {} });
  });

  test('notifications and responses only: undefined, so the route answers 202', async () => {
    const dispatcher = mcpLike();
    assert.equal(await body(dispatcher, '{"jsonrpc":"2.0","method":"notifications/initialized"}'), undefined);
    assert.equal(await body(dispatcher, '{"jsonrpc":"2.0","id":9,"result":{}}'), undefined);
    assert.equal(await body(dispatcher, '[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":9,"result":{}}]'), undefined);
  });

  test('a batch body is answered with one array', async () => {
    const answer = await body(mcpLike(), '[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}]');
    assert.deepEqual(answer, [
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: '{"args":{},"callId":1}' }] } },
      { jsonrpc: '2.0', id: 2, error: { code: -32602, message: "unknown tool 'nope'" } },
    ]);
  });

  test('the caller signal reaches the handler', async () => {
    const seen = deferred<AbortSignal>();
    const dispatcher = new Dispatcher().onRequest('wait', (_params, { signal }) => {
      seen.resolve(signal);
      return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(RpcError.internalError('client went away'))));
    });
    const controller = new AbortController();
    const answer = dispatchOnce(dispatcher, parseFrame('{"jsonrpc":"2.0","id":1,"method":"wait"}'), { signal: controller.signal });
    assert.equal(await seen.promise, controller.signal);
    controller.abort();
    assert.deepEqual(JSON.parse(serializeFrame((await answer)!)), { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'client went away' } });
  });

  test('the same handler set also serves a live connection', async () => {
    const [left, right] = createChannelPair();
    const client = new Connection(left);
    const server = new Connection(right, mcpLike());
    assert.deepEqual(await client.request('initialize', { protocolVersion: '2025-06-18', capabilities: {} }), {
      protocolVersion: '2025-06-18',
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: 'echo', version: '1.0.0' },
    });
    client.close();
    server.close();
  });
});

describe('SSE formatting', () => {
  test('an event block with event, id and one data line per line of data', () => {
    assert.equal(formatSseEvent({ event: 'endpoint', data: '/mcp/m/sse?sessionId=ab' }), 'event: endpoint\ndata: /mcp/m/sse?sessionId=ab\n\n');
    assert.equal(formatSseEvent({ data: 'a\nb\r\nc', id: '7' }), 'id: 7\ndata: a\ndata: b\ndata: c\n\n');
    assert.throws(() => formatSseEvent({ event: 'two\nlines', data: '' }), RangeError);
  });

  test('a keep-alive comment', () => {
    assert.equal(formatSseComment(), ': keep-alive\n\n');
    assert.equal(formatSseComment('ping'), ': ping\n\n');
  });

  test('a frame as a message event', () => {
    assert.equal(formatSseMessage(parseFrame('{"jsonrpc":"2.0","id":1,"result":{}}')), 'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
  });
});
