import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_REQUESTS_IN_FLIGHT } from '../../main/gateway/mcp/request-cap.js';
import { unixRequest } from '../helpers/http.js';
import { NO_CREDIT, STREAMABLE_HEADERS, startMcpGateway, type McpGateway } from './helpers.js';

/** Raw HTTP against `POST /mcp/{module}`: every status and body the MCP route answers. */
let gw: McpGateway;
before(async () => {
  gw = await startMcpGateway(['echo', 'hidden', 'trap', 'big', 'loop', 'slow']);
});
after(async () => {
  await gw.close();
});

const call = (id: number | string, method: string, params?: unknown) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
const json = (body: string): unknown => JSON.parse(body);

describe('initialize, ping, tools/list', () => {
  for (const version of ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']) {
    test(`initialize answers the requested ${version}`, async () => {
      const res = await gw.post('/mcp/echo', call(1, 'initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '1' } }));
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.deepEqual(json(res.body), {
        jsonrpc: '2.0',
        id: 1,
        result: { protocolVersion: version, capabilities: { tools: { listChanged: false } }, serverInfo: { name: 'echo', version: '1.0.0' } },
      });
    });
  }

  test('initialize with an unsupported version answers the newest supported', async () => {
    const res = await gw.post('/mcp/echo', call(2, 'initialize', { protocolVersion: '2024-10-07', capabilities: {} }));
    assert.equal((json(res.body) as { result: { protocolVersion: string } }).result.protocolVersion, '2025-11-25');
  });

  test('initialize without a protocolVersion is -32602', async () => {
    const res = await gw.post('/mcp/echo', call(3, 'initialize', {}));
    assert.equal(res.status, 200);
    assert.equal((json(res.body) as { error: { code: number } }).error.code, -32602);
  });

  test('ping is {}', async () => {
    const res = await gw.post('/mcp/echo', call('p', 'ping'));
    assert.deepEqual(json(res.body), { jsonrpc: '2.0', id: 'p', result: {} });
  });

  test('tools/list: name, description, inputSchema from the guest', async () => {
    const res = await gw.post('/mcp/echo', call(4, 'tools/list'));
    const { tools } = (json(res.body) as { result: { tools: { name: string; description: string; inputSchema: unknown }[] } }).result;
    assert.deepEqual(tools.slice(0, 2), [
      { name: 'echo', description: 'Returns its arguments-json.', inputSchema: { type: 'object', additionalProperties: true } },
      { name: 'fail', description: 'Always fails.', inputSchema: { type: 'object' } },
    ]);
  });

  test('an unknown method is -32601 (200)', async () => {
    const res = await gw.post('/mcp/echo', call(5, 'resources/list'));
    assert.equal(res.status, 200);
    assert.deepEqual(json(res.body), { jsonrpc: '2.0', id: 5, error: { code: -32601, message: 'Method not found' } });
  });
});

describe('tools/call', () => {
  test('hands the guest its arguments JSON-encoded once, call-id = the JSON-RPC id, caller unset', async () => {
    const args = { s: 'a"b\\c', list: [1, 2.5, null], deep: { k: 'ü' } };
    const res = await gw.post('/mcp/echo', call('call-77', 'tools/call', { name: 'echo', arguments: args }));
    assert.equal(res.status, 200);
    assert.deepEqual(json(res.body), { jsonrpc: '2.0', id: 'call-77', result: { content: [{ type: 'text', text: JSON.stringify(args) }] } });
    assert.deepEqual(gw.metered.at(-1), { module: 'echo', tool: 'echo', callId: 'call-77', caller: undefined });
  });

  test('the answer is JSON in UTF-8 with its exact length, as Koa wrote it before the route wrote it itself', async () => {
    const res = await gw.post('/mcp/echo', call(11, 'tools/call', { name: 'echo', arguments: { text: 'héllo ✓' } }));
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.body)));
    assert.equal((json(res.body) as { id: number }).id, 11);
  });

  test('a numeric id is the call-id as text; missing arguments are {}', async () => {
    const res = await gw.post('/mcp/echo', call(42, 'tools/call', { name: 'echo' }));
    assert.deepEqual((json(res.body) as { result: unknown }).result, { content: [{ type: 'text', text: '{}' }] });
    assert.equal(gw.metered.at(-1)?.callId, '42');
  });

  test("a guest tool-error is an isError result with '<kind>: <message>'", async () => {
    const res = await gw.post('/mcp/echo', call(6, 'tools/call', { name: 'fail', arguments: {} }));
    assert.equal(res.status, 200);
    assert.deepEqual((json(res.body) as { result: unknown }).result, { content: [{ type: 'text', text: 'failed: it failed' }], isError: true });
  });

  test('an unknown tool is -32602', async () => {
    const res = await gw.post('/mcp/echo', call(7, 'tools/call', { name: 'nope', arguments: {} }));
    assert.equal(res.status, 200);
    assert.deepEqual(json(res.body), { jsonrpc: '2.0', id: 7, error: { code: -32602, message: "unknown tool 'nope'" } });
  });

  for (const [what, params] of [
    ['no params', undefined],
    ['no params.name', { arguments: {} }],
    ['arguments that are not an object', { name: 'echo', arguments: [1, 2] }],
  ] as const) {
    test(`${what} is -32602, and the guest is not called`, async () => {
      const before = gw.metered.length;
      const res = await gw.post('/mcp/echo', call(8, 'tools/call', params));
      assert.equal((json(res.body) as { error: { code: number } }).error.code, -32602);
      assert.equal(gw.metered.length, before);
    });
  }

  test('guest output over the cap is a 502 with a short error, never the output', async () => {
    const res = await gw.post('/mcp/big', call(9, 'tools/call', { name: 'big', arguments: {} }));
    assert.equal(res.status, 502);
    assert.deepEqual(json(res.body), { jsonrpc: '2.0', id: 9, error: { code: -32603, message: 'tool output over the 1 MiB cap' } });
  });

  test('a trap is a 500, -32603', async () => {
    const res = await gw.post('/mcp/trap', call(10, 'tools/call', { name: 'trap', arguments: {} }));
    assert.equal(res.status, 500);
    const body = json(res.body) as { id: number; error: { code: number; message: string } };
    assert.equal(body.id, 10);
    assert.equal(body.error.code, -32603);
    assert.match(body.error.message, /^trap: /);
    // The instance was replaced: the module still serves.
    const again = await gw.post('/mcp/trap', call(11, 'tools/call', { name: 'echo', arguments: { ok: 1 } }));
    assert.equal(again.status, 200);
  });

  test('a timeout is a 500, -32603', async () => {
    const res = await gw.post('/mcp/loop', call(12, 'tools/call', { name: 'loop', arguments: {} }));
    assert.equal(res.status, 500);
    const body = json(res.body) as { error: { code: number; message: string } };
    assert.equal(body.error.code, -32603);
    assert.match(body.error.message, /^timeout: /);
  });

  test('a credit refusal is -32000 with the reason (200) and never waits for the module lock', async () => {
    // A busy guest holds the module's lock for 1.5 s of its own work.
    let slowDone = false;
    const slow = gw.post('/mcp/slow', call(13, 'tools/call', { name: 'slow', arguments: { ms: 1500 } })).then((res) => {
      slowDone = true;
      return res;
    });
    // The slow call is running (the meter admitted it) before the refused one is sent.
    await gw.meteredCall('13');
    const refused = await gw.post('/mcp/slow', call(14, 'tools/call', { name: 'refused', arguments: {} }));
    assert.equal(slowDone, false, 'the refusal came back while the lock was held');
    assert.equal(refused.status, 200);
    assert.deepEqual(json(refused.body), { jsonrpc: '2.0', id: 14, error: { code: -32000, message: NO_CREDIT } });
    assert.equal((await slow).status, 200);
  });
});

describe('JSON-RPC framing over HTTP', () => {
  test('jsonrpc not "2.0" is 400, -32600', async () => {
    const res = await gw.post('/mcp/echo', { jsonrpc: '1.0', id: 1, method: 'ping' });
    assert.equal(res.status, 400);
    assert.deepEqual(json(res.body), { jsonrpc: '2.0', id: 1, error: { code: -32600, message: 'Invalid Request' } });
  });

  test('a body that is not JSON is 400, -32700', async () => {
    const res = await gw.post('/mcp/echo', '{"jsonrpc":');
    assert.equal(res.status, 400);
    assert.deepEqual(json(res.body), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
  });

  test('a notification is 202 with an empty body', async () => {
    const res = await gw.post('/mcp/echo', { jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(res.status, 202);
    assert.equal(res.body, '');
    assert.equal(res.headers['content-type'], undefined);
  });

  test('a batch of notifications only is 202 with an empty body', async () => {
    const res = await gw.post('/mcp/echo', [
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
    ]);
    assert.equal(res.status, 202);
    assert.equal(res.body, '');
  });

  test('a batch: one answer array in source order, an invalid entry gets its own error', async () => {
    const res = await gw.post('/mcp/echo', [
      call('a', 'tools/call', { name: 'echo', arguments: { n: 1 } }),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '1.0', id: 'b', method: 'ping' },
      call('c', 'ping'),
      call('d', 'tools/call', { name: 'fail' }),
    ]);
    assert.equal(res.status, 200);
    assert.deepEqual(json(res.body), [
      { jsonrpc: '2.0', id: 'a', result: { content: [{ type: 'text', text: '{"n":1}' }] } },
      { jsonrpc: '2.0', id: 'b', error: { code: -32600, message: 'Invalid Request' } },
      { jsonrpc: '2.0', id: 'c', result: {} },
      { jsonrpc: '2.0', id: 'd', result: { content: [{ type: 'text', text: 'failed: it failed' }], isError: true } },
    ]);
  });

  test(`a batch of more than ${MAX_REQUESTS_IN_FLIGHT} requests is refused at once: each request answered -32000, none of it run; ${MAX_REQUESTS_IN_FLIGHT} are served`, async () => {
    const calls = (count: number, tag: string) => Array.from({ length: count }, (_, n) => call(`${tag}${n}`, 'tools/call', { name: 'echo', arguments: { n } }));
    const seen = gw.metered.length;
    const res = await gw.post('/mcp/echo', [...calls(MAX_REQUESTS_IN_FLIGHT + 1, 'over'), { jsonrpc: '2.0', method: 'notifications/initialized' }]);
    assert.equal(res.status, 200);
    const message = `too many requests in flight in one request body: at most ${MAX_REQUESTS_IN_FLIGHT}; wait for an answer before sending more`;
    assert.deepEqual(json(res.body), calls(MAX_REQUESTS_IN_FLIGHT + 1, 'over').map((c) => ({ jsonrpc: '2.0', id: c.id, error: { code: -32000, message } })));
    assert.equal(gw.metered.length, seen, 'no call of the refused batch reached the module');
    const served = await gw.post('/mcp/echo', calls(MAX_REQUESTS_IN_FLIGHT, 'ok'));
    assert.equal((json(served.body) as unknown[]).length, MAX_REQUESTS_IN_FLIGHT);
    assert.ok((json(served.body) as { result?: unknown }[]).every((answer) => answer.result !== undefined));
  });

  test('an empty batch is one Invalid Request, 400', async () => {
    const res = await gw.post('/mcp/echo', []);
    assert.equal(res.status, 400);
    assert.deepEqual(json(res.body), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } });
  });
});

describe('transport checks', () => {
  const refusal = (message: string) => ({ jsonrpc: '2.0', id: null, error: { code: -32000, message } });
  const notAcceptable = refusal('Not Acceptable: Client must accept both application/json and text/event-stream');

  for (const method of ['GET', 'DELETE']) {
    test(`${method} is 405, Allow: POST`, async () => {
      const res = await unixRequest(gw.socketPath, { method, path: '/mcp/echo', headers: { ...gw.auth, accept: 'application/json, text/event-stream' } });
      assert.equal(res.status, 405);
      assert.equal(res.headers.allow, 'POST');
      assert.deepEqual(json(res.body), refusal('Method not allowed.'));
    });
  }

  for (const accept of [undefined, 'application/json', 'text/event-stream', 'text/html, application/json;q=0, text/event-stream']) {
    test(`Accept ${accept ?? '(none)'} is 406`, async () => {
      const headers: Record<string, string> = { ...gw.auth, 'content-type': 'application/json' };
      if (accept !== undefined) headers.accept = accept;
      const res = await unixRequest(gw.socketPath, { method: 'POST', path: '/mcp/echo', headers, body: JSON.stringify(call(1, 'ping')) });
      assert.equal(res.status, 406);
      assert.deepEqual(json(res.body), notAcceptable);
    });
  }

  for (const accept of ['*/*', 'application/*, text/*', 'text/event-stream, application/json; q=0.5']) {
    test(`Accept ${accept} is served`, async () => {
      const res = await gw.post('/mcp/echo', call(1, 'ping'), { accept });
      assert.equal(res.status, 200);
    });
  }

  for (const type of [undefined, 'text/plain', 'application/jsonx']) {
    test(`Content-Type ${type ?? '(none)'} is 415`, async () => {
      const headers: Record<string, string> = { ...gw.auth, accept: STREAMABLE_HEADERS.accept };
      if (type !== undefined) headers['content-type'] = type;
      const res = await unixRequest(gw.socketPath, { method: 'POST', path: '/mcp/echo', headers, body: JSON.stringify(call(1, 'ping')) });
      assert.equal(res.status, 415);
      assert.deepEqual(json(res.body), refusal('Unsupported Media Type: Content-Type must be application/json'));
    });
  }

  test('Content-Type with parameters is served', async () => {
    const res = await gw.post('/mcp/echo', call(1, 'ping'), { 'content-type': 'Application/JSON; charset=utf-8' });
    assert.equal(res.status, 200);
  });

  test('a supported mcp-protocol-version header is accepted', async () => {
    for (const version of ['2024-11-05', '2025-11-25']) {
      const res = await gw.post('/mcp/echo', call(1, 'ping'), { 'mcp-protocol-version': version });
      assert.equal(res.status, 200);
    }
  });

  test('an unsupported mcp-protocol-version header is 400', async () => {
    const res = await gw.post('/mcp/echo', call(1, 'ping'), { 'mcp-protocol-version': '2024-10-07' });
    assert.equal(res.status, 400);
    assert.deepEqual(
      json(res.body),
      refusal('Bad Request: Unsupported protocol version: 2024-10-07 (supported versions: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)'),
    );
  });

  test('the refusal is a refusal row on the edge log', async () => {
    const rows: { status: number; reason?: string }[] = [];
    const off = gw.gateway.onEdge((row) => rows.push(row));
    await gw.post('/mcp/echo', call(1, 'ping'), { 'content-type': 'text/plain' });
    off();
    assert.deepEqual(rows.map((r) => [r.status, r.reason]), [[415, 'Unsupported Media Type: Content-Type must be application/json']]);
  });

  test('every answer of 400 or more is a row with its reason: framing errors and guest failures too', async () => {
    const rows: { status: number; reason?: string }[] = [];
    const off = gw.gateway.onEdge((row) => rows.push(row));
    try {
      await gw.post('/mcp/echo', '{"jsonrpc":');
      await gw.post('/mcp/echo', { jsonrpc: '1.0', id: 1, method: 'ping' });
      await gw.post('/mcp/echo', []);
      await gw.post('/mcp/echo', call(1, 'ping'), { 'mcp-protocol-version': '2024-10-07' });
      await gw.post('/mcp/big', call(2, 'tools/call', { name: 'big', arguments: {} }));
      await gw.post('/mcp/echo', call(3, 'ping'));
    } finally {
      off();
    }
    assert.deepEqual(
      rows.map((r) => [r.status, r.reason]),
      [
        [400, 'Parse error'],
        [400, 'Invalid Request'],
        [400, 'Invalid Request'],
        [400, 'Bad Request: Unsupported protocol version: 2024-10-07 (supported versions: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)'],
        [502, 'tool output over the 1 MiB cap'],
        [200, undefined],
      ],
    );
  });

  test('the guards still come first: no bearer is 401', async () => {
    const res = await unixRequest(gw.socketPath, { method: 'POST', path: '/mcp/echo', headers: { ...STREAMABLE_HEADERS }, body: JSON.stringify(call(1, 'ping')) });
    assert.equal(res.status, 401);
  });
});

describe('unknown module and a plugin without mcp = true look the same', () => {
  for (const name of ['nosuch', 'hidden']) {
    test(`POST /mcp/${name} is 404, -32602 under the request's id`, async () => {
      const res = await gw.post(`/mcp/${name}`, call(21, 'tools/call', { name: 'echo', arguments: {} }));
      assert.equal(res.status, 404);
      assert.deepEqual(json(res.body), { jsonrpc: '2.0', id: 21, error: { code: -32602, message: `module '${name}' not found` } });
    });

    test(`GET and DELETE /mcp/${name}, POST /mcp/${name}/sse are 404 too (not 405)`, async () => {
      for (const [method, path] of [['GET', `/mcp/${name}`], ['DELETE', `/mcp/${name}`], ['POST', `/mcp/${name}/sse?sessionId=x`]] as const) {
        const res = await unixRequest(gw.socketPath, { method, path, headers: { ...gw.auth, ...STREAMABLE_HEADERS }, body: '' });
        assert.equal(res.status, 404, `${method} ${path}`);
        assert.deepEqual(json(res.body), { jsonrpc: '2.0', id: null, error: { code: -32602, message: `module '${name}' not found` } });
      }
    });

    test(`GET /mcp/${name}/sse is 404 {"error":…}`, async () => {
      const res = await unixRequest(gw.socketPath, { path: `/mcp/${name}/sse`, headers: { ...gw.auth, accept: 'text/event-stream' } });
      assert.equal(res.status, 404);
      assert.deepEqual(json(res.body), { error: `module '${name}' not found` });
    });
  }

  test('the index lists only the MCP module’s surfaces', async () => {
    const res = await unixRequest(gw.socketPath, { path: '/', headers: gw.auth });
    const modules = (json(res.body) as { modules: { name: string; surfaces: string[] }[] }).modules;
    assert.deepEqual(modules.find((m) => m.name === 'hidden')?.surfaces, []);
    assert.deepEqual(modules.find((m) => m.name === 'echo')?.surfaces, ['/mcp/echo', '/mcp/echo/sse']);
  });
});
