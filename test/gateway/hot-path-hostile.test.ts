/**
 * The gateway's POST /mcp path after its speed-ups (one guards middleware, the answer written
 * straight to Node's response, the body read with fewer listeners), attacked as a hostile local
 * client: the refusals keep their order and come before any body is read, pipelined answers stay
 * whole and in order with rows that match them, and clients that leave early or odd-shaped
 * requests leave no error behind and the gateway serving.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { EdgeRow } from '../../main/gateway/index.js';
import { MAX_REQUEST_BYTES } from '../../main/gateway/guards/body-limit.js';
import { RawConnection, unixRequest } from '../helpers/http.js';
import { startMcpGateway, type McpGateway } from '../mcp/helpers.js';

let gw: McpGateway;
const errors: unknown[] = [];
const rows: EdgeRow[] = [];
before(async () => {
  gw = await startMcpGateway(['echo'], { onError: (err) => errors.push(err) });
  gw.gateway.onEdge((row) => rows.push(row));
});
after(async () => {
  await gw.close();
});

const head = (path: string, headers: string, length?: number): string =>
  `POST ${path} HTTP/1.1\r\nHost: localhost\r\n${headers}Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n` +
  (length === undefined ? 'Transfer-Encoding: chunked\r\n\r\n' : `Content-Length: ${length}\r\n\r\n`);
const post = (body: string, auth = gw.auth.authorization!): string => head('/mcp/echo', `Authorization: ${auth}\r\n`, Buffer.byteLength(body)) + body;
const ping = (id: number | string): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });

async function stillServes(): Promise<void> {
  const res = await gw.post('/mcp/echo', ping('still'));
  assert.equal(res.status, 200);
  assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: 'still', result: {} });
}

describe('guards, in order, before the body is read', () => {
  test('no token and a chunked body that never ends: 401 with WWW-Authenticate at once', async () => {
    const conn = await RawConnection.open(gw.socketPath);
    try {
      await conn.write(head('/mcp/echo', '') + '10\r\n' + 'x'.repeat(16) + '\r\n');
      const refused = await conn.readResponse();
      assert.equal(refused.status, 401);
      assert.equal(refused.headers['www-authenticate'], 'Bearer');
    } finally {
      conn.close();
    }
  });

  test('a foreign Host with no token and a declared body over the cap: 403 (loopback first)', async () => {
    const res = await unixRequest(gw.socketPath, {
      method: 'POST',
      path: '/mcp/echo',
      headers: { host: 'evil.example', 'content-length': String(MAX_REQUEST_BYTES + 1) },
    });
    assert.equal(res.status, 403);
  });

  test('a wrong token that is a prefix of the right one, and one with a byte more: 401', async () => {
    const token = gw.auth.authorization!;
    // (a lower-case scheme is the right token: an auth-scheme is case-insensitive, guards.test.ts)
    for (const auth of [token.slice(0, -1), `${token}x`]) {
      const res = await unixRequest(gw.socketPath, { method: 'POST', path: '/mcp/echo', headers: { authorization: auth, 'content-type': 'application/json' }, body: ping(1) });
      assert.equal(res.status, 401, auth === token ? 'right token' : 'wrong token');
    }
  });

  test('exactly the cap, chunked with no length, passes the cap (and is then a parse error)', async () => {
    const conn = await RawConnection.open(gw.socketPath);
    try {
      await conn.write(head('/mcp/echo', `Authorization: ${gw.auth.authorization}\r\n`));
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      for (let at = 0; at < MAX_REQUEST_BYTES; at += chunk.length) {
        await conn.write(`${chunk.length.toString(16)}\r\n`);
        await conn.write(chunk);
        await conn.write('\r\n');
      }
      await conn.write('0\r\n\r\n');
      const res = await conn.readResponse();
      assert.equal(res.status, 400);
      assert.equal((JSON.parse(res.body) as { error: { code: number } }).error.code, -32700);
    } finally {
      conn.close();
    }
  });
});

describe('the answer written straight to the response', () => {
  test('pipelined requests on one connection: each answered whole, in order, each row with the status sent', async () => {
    const conn = await RawConnection.open(gw.socketPath);
    const before = rows.length;
    try {
      const init = JSON.stringify({ jsonrpc: '2.0', id: 'i', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {} } });
      const call = JSON.stringify({ jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'echo', arguments: { t: 'é✓' } } });
      await conn.write(post(init) + post('{"jsonrpc":') + post(call) + post(ping(4)));
      const answers = [await conn.readResponse(), await conn.readResponse(), await conn.readResponse(), await conn.readResponse()];
      assert.deepEqual(answers.map((a) => a.status), [200, 400, 200, 200]);
      assert.match(String(answers[0]!.headers['mcp-session-id']), /^[0-9a-f]{32}$/);
      assert.equal(answers[1]!.headers['mcp-session-id'], undefined);
      for (const a of answers) {
        assert.equal(a.headers['content-type'], 'application/json; charset=utf-8');
        assert.equal(Number(a.headers['content-length']), Buffer.byteLength(a.body));
      }
      assert.deepEqual(answers.map((a) => (JSON.parse(a.body) as { id: unknown }).id), ['i', null, 'c', 4]);
      assert.ok(!conn.isClosed);
      const mine = rows.slice(before).filter((r) => r.path === '/mcp/echo');
      assert.deepEqual(mine.map((r) => r.status), [200, 400, 200, 200]);
      assert.equal(mine[1]!.reason, 'Parse error');
    } finally {
      conn.close();
    }
  });

  test('HEAD and OPTIONS are 405 with Allow: POST, and no body', async () => {
    for (const method of ['HEAD', 'OPTIONS']) {
      const res = await unixRequest(gw.socketPath, { method, path: '/mcp/echo', headers: gw.auth });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.allow, 'POST');
      if (method === 'HEAD') assert.equal(res.body, '');
    }
  });

  test('an edge listener that throws after the answer went out: the answer is whole, no second write, still serving', async () => {
    const off = gw.gateway.onEdge(() => {
      throw new Error('listener broke');
    });
    try {
      const res = await gw.post('/mcp/echo', ping('t'));
      assert.equal(res.status, 200);
      assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: 't', result: {} });
    } finally {
      off();
    }
    await stillServes();
  });
});

describe('clients that leave early', () => {
  test('a client that half-closes right after its request, and one that resets: no error, still serving', async () => {
    for (const leave of ['end', 'destroy'] as const) {
      const conn = await RawConnection.open(gw.socketPath);
      await conn.write(post(JSON.stringify({ jsonrpc: '2.0', id: 'h', method: 'tools/call', params: { name: 'echo', arguments: {} } })) + post('{"jsonrpc":'));
      if (leave === 'end') conn.socket.end();
      else conn.close();
      await new Promise<void>((resolve) => (conn.isClosed ? resolve() : conn.socket.once('close', () => resolve())));
    }
    await stillServes();
    assert.deepEqual(errors, []);
  });

  test('a body sent slowly then abandoned mid-chunk: a 499 row, no error, still serving', async () => {
    const conn = await RawConnection.open(gw.socketPath);
    const row = new Promise<EdgeRow>((resolve) => {
      const off = gw.gateway.onEdge((r) => {
        if (r.status === 499) (off(), resolve(r));
      });
    });
    await conn.write(head('/mcp/echo', `Authorization: ${gw.auth.authorization}\r\n`) + '100\r\n{"jsonrpc":');
    await conn.write('"2.0"');
    conn.close();
    assert.equal((await row).reason, 'cancelled: the client went away while sending its body');
    await stillServes();
    assert.deepEqual(errors, []);
  });
});
