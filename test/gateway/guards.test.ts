import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_REQUEST_BYTES } from '../../main/gateway/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { RawConnection, unixRequest } from '../helpers/http.js';

const HOST_BODY = '{"error":"forbidden: the Host header is not a loopback name"}';
const ORIGIN_BODY = '{"error":"forbidden: the Origin header is not loopback"}';
const unauthorizedBody = (reason: string): string => JSON.stringify({ error: `unauthorized: the gateway's launch token is required (${reason})` });

let gw: RunningGateway;
before(async () => {
  gw = await startGateway({
    list: () => [
      { name: 'text-tools', version: '1.2.0', description: 'text', protocols: { mcp: true, a2a: false } },
      { name: 'hidden', version: '0.1.0', description: 'no surfaces', protocols: { mcp: false, a2a: false } },
    ],
  });
});
after(() => gw.close());

const get = (headers: Record<string, string>, path = '/') => unixRequest(gw.socketPath, { path, headers });

describe('loopback Host and Origin', () => {
  for (const host of ['localhost', 'localhost:8080', 'LOCALHOST', '127.0.0.1', '127.0.0.1:3000', '127.5.6.7', '127.255.255.254:1', '[::1]', '[::1]:9000']) {
    test(`Host ${host} is served`, async () => {
      const res = await get({ ...gw.auth, host });
      assert.equal(res.status, 200);
    });
  }

  for (const host of ['localhost.evil.com', 'evil.com', '128.0.0.1', '0.0.0.0', '[::2]', '10.0.0.1', 'localhost:http', '127.0.0.1.nip.io', '[::1]x']) {
    test(`Host ${host} is refused with 403`, async () => {
      const res = await get({ ...gw.auth, host });
      assert.equal(res.status, 403);
      assert.equal(res.body, HOST_BODY);
      assert.match(String(res.headers['content-type']), /^application\/json/);
    });
  }

  test('a request without Host is served', async () => {
    const conn = await RawConnection.open(gw.socketPath);
    try {
      await conn.write(`GET / HTTP/1.1\r\nAuthorization: ${gw.auth.authorization}\r\n\r\n`);
      const res = await conn.readResponse();
      assert.equal(res.status, 200);
      assert.match(res.body, /"gateway":"chatty-protocol-gateway"/);
    } finally {
      conn.close();
    }
  });

  for (const origin of ['http://localhost', 'http://localhost:5173', 'https://127.0.0.1:8443', 'http://[::1]:3000']) {
    test(`Origin ${origin} is served`, async () => {
      const res = await get({ ...gw.auth, host: 'localhost', origin });
      assert.equal(res.status, 200);
    });
  }

  for (const origin of ['null', 'http://evil.com', 'http://localhost.evil.com', 'file://', 'chrome-extension://abc', 'garbage']) {
    test(`Origin ${origin} is refused with 403`, async () => {
      const res = await get({ ...gw.auth, host: 'localhost', origin });
      assert.equal(res.status, 403);
      assert.equal(res.body, ORIGIN_BODY);
    });
  }

  test('the loopback check comes before the token check', async () => {
    const res = await get({ host: 'evil.com' });
    assert.equal(res.status, 403);
    assert.equal(res.body, HOST_BODY);
  });
});

describe('bearer token', () => {
  const refused: [string, () => Record<string, string>, string][] = [
    ['no Authorization', () => ({}), 'no Authorization header'],
    ['a wrong token', () => ({ authorization: `Bearer ${'0'.repeat(64)}` }), 'wrong launch token'],
    ['a trailing character', () => ({ authorization: `${gw.auth.authorization}x` }), 'wrong launch token'],
    ['a tab for the space', () => ({ authorization: gw.auth.authorization!.replace('Bearer ', 'Bearer\t') }), 'Authorization is not a Bearer credential'],
    ['Basic credentials', () => ({ authorization: `Basic ${Buffer.from(`u:${gw.gateway.token()}`).toString('base64')}` }), 'Authorization is not a Bearer credential'],
    ['the bare token', () => ({ authorization: gw.gateway.token() }), 'Authorization is not a Bearer credential'],
  ];
  for (const [name, headers, reason] of refused) {
    test(`${name}: 401 with WWW-Authenticate: Bearer, the body saying why`, async () => {
      const res = await get(headers());
      assert.equal(res.status, 401);
      assert.equal(res.headers['www-authenticate'], 'Bearer');
      assert.equal(res.body, unauthorizedBody(reason));
    });
  }

  // An auth-scheme is case-insensitive (RFC 9110 11.1) and RFC 6750 allows 1*SP before the token:
  // a header written by hand, or built from an OAuth token_type of "bearer", was refused 401.
  for (const scheme of ['bearer', 'BEARER', 'Bearer  ']) {
    test(`"${scheme}" and the token is accepted`, async () => {
      const res = await get({ authorization: `${scheme} ${gw.gateway.token()}` });
      assert.equal(res.status, 200, res.body);
    });
  }

  test('the fallback is guarded too: an unknown route without the token is 401, with it 404 JSON', async () => {
    const without = await get({}, '/no/such/route');
    assert.equal(without.status, 401);
    const withToken = await get(gw.auth, '/no/such/route');
    assert.equal(withToken.status, 404);
    assert.deepEqual(JSON.parse(withToken.body), { error: 'not found: GET /no/such/route' });
  });

  test('the token check comes before the body cap', async () => {
    const res = await unixRequest(gw.socketPath, { method: 'POST', path: '/', headers: { 'content-length': String(MAX_REQUEST_BYTES + 1) } });
    assert.equal(res.status, 401);
  });
});

describe('body cap', () => {
  const over = Buffer.alloc(MAX_REQUEST_BYTES + 1, 0x61);

  test('10 MiB + 1 byte with Content-Length: 413, and the connection keeps serving', async () => {
    const conn = await RawConnection.open(gw.socketPath);
    try {
      await conn.write(`POST /mcp/x HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nContent-Type: application/json\r\nContent-Length: ${over.length}\r\n\r\n`);
      const refused = await conn.readResponse();
      assert.equal(refused.status, 413);
      assert.deepEqual(JSON.parse(refused.body), { error: 'payload too large: request bodies are limited to 10 MiB' });
      await conn.write(over);
      await conn.write(`GET / HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\n\r\n`);
      const next = await conn.readResponse();
      assert.equal(next.status, 200);
      assert.ok(!conn.isClosed);
    } finally {
      conn.close();
    }
  });

  test('10 MiB + 1 byte chunked, no Content-Length: 413, and the connection keeps serving', async () => {
    const conn = await RawConnection.open(gw.socketPath);
    try {
      await conn.write(`POST /mcp/x HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nTransfer-Encoding: chunked\r\n\r\n`);
      const chunk = 1024 * 1024;
      for (let at = 0; at < over.length; at += chunk) {
        const part = over.subarray(at, at + chunk);
        await conn.write(`${part.length.toString(16)}\r\n`);
        await conn.write(part);
        await conn.write('\r\n');
      }
      await conn.write('0\r\n\r\n');
      const refused = await conn.readResponse();
      assert.equal(refused.status, 413);
      assert.deepEqual(JSON.parse(refused.body), { error: 'payload too large: request bodies are limited to 10 MiB' });
      await conn.write(`GET / HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\n\r\n`);
      const next = await conn.readResponse();
      assert.equal(next.status, 200);
    } finally {
      conn.close();
    }
  });

  test('exactly 10 MiB passes the cap (and reaches routing)', async () => {
    const res = await unixRequest(gw.socketPath, {
      method: 'POST',
      path: '/no/such/route',
      headers: { ...gw.auth, 'content-type': 'application/json' },
      body: Buffer.alloc(MAX_REQUEST_BYTES, 0x61),
    });
    assert.equal(res.status, 404);
  });
});

describe('index', () => {
  test('GET / lists the modules and the surfaces each serves', async () => {
    const res = await get(gw.auth);
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), {
      gateway: 'chatty-protocol-gateway',
      modules: [
        { name: 'text-tools', version: '1.2.0', description: 'text', surfaces: ['/mcp/text-tools', '/mcp/text-tools/sse'] },
        { name: 'hidden', version: '0.1.0', description: 'no surfaces', surfaces: [] },
      ],
    });
  });
});

describe('a client that goes away while sending its body', () => {
  test('is a 499 row saying so, not a handler failure logged with a stack', async () => {
    const errors: unknown[] = [];
    const own = await startGateway({ list: () => [] }, { onError: (err) => errors.push(err) });
    const rows: { status: number; reason?: string | undefined }[] = [];
    const row = new Promise<void>((resolve) => own.gateway.onEdge((r) => (rows.push(r), resolve())));
    try {
      const conn = await RawConnection.open(own.socketPath);
      await conn.write(`POST /mcp/x HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${own.auth.authorization}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":`);
      conn.close();
      await row;
      assert.deepEqual(errors, []);
      assert.equal(rows[0]?.status, 499);
      assert.equal(rows[0]?.reason, 'cancelled: the client went away while sending its body');
    } finally {
      await own.close();
    }
  });
});
