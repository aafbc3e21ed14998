import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import type { CallableModule, SseSessionEvent } from '../../main/gateway/index.js';
import { startGateway } from '../helpers/gateway.js';
import { unixRequest } from '../helpers/http.js';
import { startMcpGateway, type McpGateway } from './helpers.js';
import { SseStream } from './sse-reader.js';

/** Raw HTTP against the legacy HTTP+SSE transport (MCP 2024-11-05), keep-alives shortened to 40 ms. */
const KEEP_ALIVE_MS = 40;
let gw: McpGateway;
before(async () => {
  gw = await startMcpGateway(['echo', 'trap'], { sseKeepAliveMs: KEEP_ALIVE_MS });
});
after(async () => {
  await gw.close();
});

const json = (body: string): unknown => JSON.parse(body);
const call = (id: number | string, method: string, params?: unknown) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

/** A gateway of its own serving one module, `m`, whose tools/call is `invokeTool`. */
function gatewayServing(invokeTool: CallableModule['invokeTool']): ReturnType<typeof startGateway> {
  const module: CallableModule = { name: 'm', version: '0.1.0', description: '', protocols: { mcp: true, a2a: false }, listTools: async () => [], invokeTool };
  return startGateway({ list: () => [module], get: (name) => (name === 'm' ? module : undefined) });
}

/** Opens `/mcp/{module}/sse` and reads its endpoint event. */
async function openSession(module = 'echo'): Promise<{ stream: SseStream; endpoint: string; id: string }> {
  const stream = await SseStream.open(gw.socketPath, `/mcp/${module}/sse`, gw.auth);
  assert.equal(stream.status, 200);
  const first = await stream.next();
  assert.equal(first.kind, 'event');
  assert.equal(first.kind === 'event' && first.event, 'endpoint');
  const endpoint = first.kind === 'event' ? first.data : '';
  const match = /^\/mcp\/[^/]+\/sse\?sessionId=([0-9a-f]{32})$/.exec(endpoint);
  assert.ok(match, `endpoint ${endpoint}`);
  return { stream, endpoint, id: match[1]! };
}

function postTo(path: string, body: string | object, headers: Record<string, string> = {}) {
  return unixRequest(gw.socketPath, {
    method: 'POST',
    path,
    headers: { ...gw.auth, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Resolves with the session event for `id` in `state`. */
function sessionEvent(id: string, state: SseSessionEvent['state']): Promise<SseSessionEvent> {
  return new Promise((resolve) => {
    const off = gw.gateway.onSseSession((event) => {
      if (event.id === id && event.state === state) {
        off();
        resolve(event);
      }
    });
  });
}

describe('a session', { timeout: 180_000 }, () => {
  test('the stream is text/event-stream and its first event is endpoint /mcp/{m}/sse?sessionId=<32 hex>', async () => {
    const { stream, endpoint } = await openSession();
    try {
      assert.equal(stream.response.headers['content-type'], 'text/event-stream');
      assert.equal(stream.response.headers['cache-control'], 'no-cache, no-transform');
      assert.ok(endpoint.startsWith('/mcp/echo/sse?sessionId='));
    } finally {
      stream.disconnect();
    }
  });

  test('each POST is 202 with an empty body; its answer arrives as a message event', async () => {
    const { stream, endpoint } = await openSession();
    try {
      const res = await postTo(endpoint, call(1, 'initialize', { protocolVersion: '2024-11-05', capabilities: {} }));
      assert.equal(res.status, 202);
      assert.equal(res.body, '');
      const answer = await stream.nextEvent();
      assert.equal(answer.event, 'message');
      assert.deepEqual(json(answer.data), {
        jsonrpc: '2.0',
        id: 1,
        result: { protocolVersion: '2024-11-05', capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'echo', version: '1.0.0' } },
      });

      const called = await postTo(endpoint, call(2, 'tools/call', { name: 'echo', arguments: { a: [1] } }));
      assert.equal(called.status, 202);
      assert.deepEqual(json((await stream.nextEvent()).data), { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: '{"a":[1]}' }] } });
    } finally {
      stream.disconnect();
    }
  });

  test('a notification is 202 and puts nothing on the stream', async () => {
    const { stream, endpoint } = await openSession();
    try {
      assert.equal((await postTo(endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
      assert.equal((await postTo(endpoint, call('after', 'ping'))).status, 202);
      // The next event is the ping's answer: the notification produced none.
      assert.deepEqual(json((await stream.nextEvent()).data), { jsonrpc: '2.0', id: 'after', result: {} });
    } finally {
      stream.disconnect();
    }
  });

  test('a batch is answered as one message event holding the array', async () => {
    const { stream, endpoint } = await openSession();
    try {
      const res = await postTo(endpoint, [call('x', 'ping'), { jsonrpc: '2.0', method: 'notifications/initialized' }, call('y', 'tools/call', { name: 'fail' })]);
      assert.equal(res.status, 202);
      assert.deepEqual(json((await stream.nextEvent()).data), [
        { jsonrpc: '2.0', id: 'x', result: {} },
        { jsonrpc: '2.0', id: 'y', result: { content: [{ type: 'text', text: 'failed: it failed' }], isError: true } },
      ]);
    } finally {
      stream.disconnect();
    }
  });

  test('a body that is not JSON is 202; the Parse error arrives on the stream', async () => {
    const { stream, endpoint } = await openSession();
    try {
      assert.equal((await postTo(endpoint, 'nope')).status, 202);
      assert.deepEqual(json((await stream.nextEvent()).data), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    } finally {
      stream.disconnect();
    }
  });

  test('a guest failure arrives on the stream as -32603 (the POST was already 202)', async () => {
    const { stream, endpoint } = await openSession('trap');
    try {
      assert.equal((await postTo(endpoint, call(3, 'tools/call', { name: 'trap' }))).status, 202);
      const answer = json((await stream.nextEvent()).data) as { id: number; error: { code: number } };
      assert.equal(answer.id, 3);
      assert.equal(answer.error.code, -32603);
    } finally {
      stream.disconnect();
    }
  });
});

describe('refusals', () => {
  test("an unknown session is 404 {\"error\":\"no open SSE session '<id>'\"}", async () => {
    const id = 'ab'.repeat(16);
    const res = await postTo(`/mcp/echo/sse?sessionId=${id}`, call(1, 'ping'));
    assert.equal(res.status, 404);
    assert.deepEqual(json(res.body), { error: `no open SSE session '${id}'` });
  });

  test("another module's session is 404 the same way, and that session is untouched", async () => {
    const { stream, endpoint, id } = await openSession('echo');
    try {
      const res = await postTo(`/mcp/trap/sse?sessionId=${id}`, call(1, 'ping'));
      assert.equal(res.status, 404);
      assert.deepEqual(json(res.body), { error: `no open SSE session '${id}'` });
      assert.equal((await postTo(endpoint, call(2, 'ping'))).status, 202);
      assert.deepEqual(json((await stream.nextEvent()).data), { jsonrpc: '2.0', id: 2, result: {} });
    } finally {
      stream.disconnect();
    }
  });

  test('a POST without sessionId is 400', async () => {
    const res = await postTo('/mcp/echo/sse', call(1, 'ping'));
    assert.equal(res.status, 400);
    assert.deepEqual(json(res.body), { error: 'the sessionId query parameter is required' });
  });

  test('Content-Type other than JSON is 415; an unsupported mcp-protocol-version is 400', async () => {
    const { stream, endpoint } = await openSession();
    try {
      const wrongType = await postTo(endpoint, call(1, 'ping'), { 'content-type': 'text/plain' });
      assert.equal(wrongType.status, 415);
      assert.equal((json(wrongType.body) as { error: { code: number } }).error.code, -32000);
      const wrongVersion = await postTo(endpoint, call(1, 'ping'), { 'mcp-protocol-version': '2099-01-01' });
      assert.equal(wrongVersion.status, 400);
      assert.match((json(wrongVersion.body) as { error: { message: string } }).error.message, /Unsupported protocol version: 2099-01-01/);
    } finally {
      stream.disconnect();
    }
  });

  test('a GET whose Accept excludes text/event-stream is 406 {"error":…}', async () => {
    const res = await unixRequest(gw.socketPath, { path: '/mcp/echo/sse', headers: { ...gw.auth, accept: 'application/json' } });
    assert.equal(res.status, 406);
    assert.deepEqual(json(res.body), { error: 'Not Acceptable: Client must accept text/event-stream' });
  });

  test('a GET with an unsupported mcp-protocol-version is 400 {"error":…}', async () => {
    const res = await unixRequest(gw.socketPath, { path: '/mcp/echo/sse', headers: { ...gw.auth, accept: 'text/event-stream', 'mcp-protocol-version': '2024-10-07' } });
    assert.equal(res.status, 400);
    assert.match((json(res.body) as { error: string }).error, /^Bad Request: Unsupported protocol version: 2024-10-07/);
  });

  test('DELETE on the stream path is 405, Allow: GET, POST', async () => {
    const res = await unixRequest(gw.socketPath, { method: 'DELETE', path: '/mcp/echo/sse', headers: gw.auth });
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'GET, POST');
  });
});

describe('lifetime', { timeout: 180_000 }, () => {
  test('the stream stays open past two keep-alive comments, and the session ends when the client disconnects', async () => {
    const opened: SseSessionEvent[] = [];
    const off = gw.gateway.onSseSession((event) => opened.push(event));
    const { stream, endpoint, id } = await openSession();
    off();
    assert.deepEqual(opened, [{ id, module: 'echo', state: 'open' }]);
    // Two keep-alives in a row, with nothing else sent meanwhile.
    assert.deepEqual(await stream.next(), { kind: 'comment', text: 'keep-alive' });
    assert.deepEqual(await stream.next(), { kind: 'comment', text: 'keep-alive' });
    // Still a live session.
    assert.equal((await postTo(endpoint, call('alive', 'ping'))).status, 202);
    assert.deepEqual(json((await stream.nextEvent()).data), { jsonrpc: '2.0', id: 'alive', result: {} });

    const closed = sessionEvent(id, 'closed');
    stream.disconnect();
    assert.deepEqual(await closed, { id, module: 'echo', state: 'closed' });
    const res = await postTo(endpoint, call(1, 'ping'));
    assert.equal(res.status, 404);
    assert.deepEqual(json(res.body), { error: `no open SSE session '${id}'` });
  });

  test("a POST answered 202 keeps its body counted until its call is answered, then lets it go", async () => {
    // The call outlives its 202: the body and its parsed copies are held until the answer, so the
    // bodies' ledger (ReadingBodies) counts it until then (ctx.state.bodyHold), not until the 202.
    let answer = (): void => {};
    let called = (): void => {};
    const running = new Promise<void>((resolve) => (called = resolve));
    const own = await gatewayServing(() => {
      called();
      return new Promise((resolve) => (answer = () => resolve({ ok: true, value: { content: 'done' } })));
    });
    try {
      const stream = await SseStream.open(own.socketPath, '/mcp/m/sse', own.auth);
      const endpoint = (await stream.nextEvent()).data;
      const body = JSON.stringify(call(7, 'tools/call', { name: 't', arguments: { text: 'x'.repeat(100_000) } }));
      const res = await unixRequest(own.socketPath, { method: 'POST', path: endpoint, headers: { ...own.auth, 'content-type': 'application/json' }, body });
      assert.equal(res.status, 202);
      await running;
      assert.ok(own.gateway.readingBodyBytes >= body.length, `${own.gateway.readingBodyBytes} bytes counted after the 202, the call running`);
      answer();
      const event = await stream.nextEvent();
      assert.equal(event.event, 'message');
      assert.equal((json(event.data) as { id: number }).id, 7);
      assert.equal(own.gateway.readingBodyBytes, 0, 'let go once answered');
      stream.disconnect();
    } finally {
      await own.close();
    }
  });

  test('stop() ends open streams', async () => {
    const own = await gatewayServing(async () => ({ ok: true, value: { content: '' } }));
    try {
      const stream = await SseStream.open(own.socketPath, '/mcp/m/sse', own.auth);
      assert.equal((await stream.nextEvent()).event, 'endpoint');
      assert.equal(own.gateway.openSseSessions, 1);
      const closed = once(stream.response, 'end');
      await own.gateway.stop();
      await closed;
      assert.equal(own.gateway.openSseSessions, 0);
    } finally {
      await own.close();
    }
  });
});
