/**
 * The forward's edges, over raw HTTP on the socket: what passes upstream byte for byte, and every
 * way the runner can fail (none configured, down, hanging, answering something that is not
 * JSON-RPC) with the exact status, body and edge-log row.
 */
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { noRunnerMessage } from '../../main/gateway/a2a/index.js';
import { ProtocolGateway, type EdgeRow } from '../../main/gateway/index.js';
import { A2aRunner, userMessage } from './runner.js';
import { closedPort, fakeUpstream, neverAccepting, rowsFor, startA2aGateway, type A2aGateway } from './helpers.js';

const SEND = { jsonrpc: '2.0', id: 7, method: 'message/send', params: { message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'hi' }] } } };

/** What the fake upstream saw of one request. */
interface Seen {
  rawHeaders: string[];
  body: string;
  closedEarly: Promise<void>;
}

function record(into: Seen[], req: IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let closed!: () => void;
    const closedEarly = new Promise<void>((r) => (closed = r));
    res.once('close', () => {
      if (!res.writableFinished) closed();
    });
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      into.push({ rawHeaders: req.rawHeaders, body: Buffer.concat(chunks).toString('utf8'), closedEarly });
      resolve();
    });
  });
}

function headerValues(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) values.push(rawHeaders[i + 1]!);
  return values;
}

describe('without a remote runner', () => {
  let gw: A2aGateway;
  before(async () => {
    gw = await startA2aGateway({ remote: ['echo'] });
  });
  after(() => gw.close());

  it('a remote module answers 503 with a clear JSON-RPC error, and its row', async () => {
    const res = await gw.request('POST', '/a2a/echo', SEND);
    assert.equal(res.status, 503);
    assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: 7, error: { code: -32603, message: noRunnerMessage('echo') } });
    assert.match(noRunnerMessage('echo'), /module 'echo' runs on a remote runner and none is configured/);
    const [row] = rowsFor(gw.rows, '/a2a/echo');
    assert.deepEqual([row?.method, row?.status, row?.reason], ['POST', 503, noRunnerMessage('echo')]);
  });

  it("the SDK client still discovers the card, and its send fails with the gateway's message", async () => {
    const client = await gw.client('echo', '1.0');
    await assert.rejects(client.sendMessage({ tenant: '', message: userMessage('hi'), configuration: undefined, metadata: undefined }), /none is configured/);
  });
});

describe('a runner that is down', () => {
  let gw: A2aGateway;
  let url: string;
  before(async () => {
    url = await closedPort();
    gw = await startA2aGateway({ remote: ['echo'], options: { remoteRunner: { url, token: 't' } } });
  });
  after(() => gw.close());

  it('502 with a JSON-RPC error naming the runner and the refusal, at once', async () => {
    const res = await gw.request('POST', '/a2a/echo', SEND);
    assert.equal(res.status, 502);
    const body = JSON.parse(res.body) as { id: unknown; error: { code: number; message: string } };
    assert.equal(body.id, 7);
    assert.equal(body.error.code, -32603);
    assert.equal(body.error.message, `the remote runner at ${url} could not be reached: connect ECONNREFUSED ${url.slice('http://'.length)}`);
    const [row] = rowsFor(gw.rows, '/a2a/echo');
    assert.deepEqual([row?.status, row?.reason], [502, body.error.message]);
  });

  it('the SDK client (0.3 mode, streaming) gets the error, not a hang', async () => {
    const client = await gw.client('echo', '0.3');
    await assert.rejects(async () => {
      for await (const _ of client.sendMessageStream({ tenant: '', message: userMessage('hi'), configuration: undefined, metadata: undefined })) {
        assert.fail('no event can come from a runner that is down');
      }
    }, /could not be reached/);
  });
});

describe('a runner that accepts and never answers', () => {
  let gw: A2aGateway;
  let upstream: Awaited<ReturnType<typeof fakeUpstream>>;
  before(async () => {
    upstream = await fakeUpstream(null);
    gw = await startA2aGateway({ remote: ['echo'], options: { remoteRunner: { url: upstream.url, firstByteTimeoutMs: 300 } } });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  for (const accept of ['application/json', 'text/event-stream']) {
    it(`times out with 502 after the first-byte timeout (Accept: ${accept})`, async () => {
      const started = performance.now();
      const res = await gw.request('POST', '/a2a/echo', SEND, { accept });
      const elapsed = performance.now() - started;
      assert.equal(res.status, 502);
      assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: 7, error: { code: -32603, message: `the remote runner at ${upstream.url} did not answer within 300 ms` } });
      assert.ok(elapsed >= 290, `waited for the timeout (${elapsed} ms)`);
    });
  }

});

describe('a runner that does not accept the connection', () => {
  it('502 after the connect timeout, naming it', async () => {
    const listener = await neverAccepting();
    const gw = await startA2aGateway({ remote: ['echo'], options: { remoteRunner: { url: listener.url, connectTimeoutMs: 300, firstByteTimeoutMs: 60_000 } } });
    try {
      const started = performance.now();
      const res = await gw.request('POST', '/a2a/echo', SEND);
      const elapsed = performance.now() - started;
      assert.equal(res.status, 502);
      const message = `the remote runner at ${listener.url} did not accept a connection within 300 ms`;
      assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: 7, error: { code: -32603, message } });
      assert.equal(rowsFor(gw.rows, '/a2a/echo').at(-1)?.reason, message);
      assert.ok(elapsed >= 290 && elapsed < 30_000, `waited for the connect timeout, not the first-byte one (${elapsed} ms)`);
    } finally {
      await gw.close();
      await listener.close();
    }
  });
});

describe('a runner that goes silent mid-answer', () => {
  const IDLE = 300;
  const silent = `the remote runner at URL stopped sending its answer for ${IDLE} ms`;
  let closedEarly: Promise<void> = Promise.resolve();
  let reply: (res: import('node:http').ServerResponse) => void = () => {};
  let gw: A2aGateway;
  let upstream: Awaited<ReturnType<typeof fakeUpstream>>;
  before(async () => {
    upstream = await fakeUpstream((req, res) => {
      req.resume();
      closedEarly = new Promise((resolve) => res.once('close', () => !res.writableFinished && resolve()));
      reply(res);
    });
    gw = await startA2aGateway({ remote: ['echo'], options: { remoteRunner: { url: upstream.url, idleTimeoutMs: IDLE } } });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  const errorEvent = (message: string): string => `event: error\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 7, error: { code: -32603, message } })}\n\n`;

  it('a stream: the events so far, then an error event, then the end; the upstream request is closed', async () => {
    const event = 'data: {"jsonrpc":"2.0","id":7,"result":{"kind":"task"}}\n\n';
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(event); // and then nothing, never ending
    };
    const res = await gw.request('POST', '/a2a/echo', SEND, { accept: 'text/event-stream' });
    assert.equal(res.status, 200);
    assert.equal(res.body, event + errorEvent(silent.replace('URL', upstream.url)));
    await closedEarly;
  });

  it('a stream that sends its headers and nothing else ends with the error event alone', async () => {
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
    };
    const res = await gw.request('POST', '/a2a/echo', SEND, { accept: 'text/event-stream' });
    assert.equal(res.status, 200);
    assert.equal(res.body, errorEvent(silent.replace('URL', upstream.url)));
    await closedEarly;
  });

  it('a JSON answer that stalls midway: 502 with a JSON-RPC error; the upstream request is closed', async () => {
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"jsonrpc":"2.0",'); // and nothing more
    };
    const res = await gw.request('POST', '/a2a/echo', SEND);
    assert.equal(res.status, 502);
    const message = silent.replace('URL', upstream.url);
    assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: 7, error: { code: -32603, message } });
    assert.equal(rowsFor(gw.rows, '/a2a/echo').at(-1)?.reason, message);
    await closedEarly;
  });

  it('the timeout is for silence, not for the whole answer: a runner that keeps sending is never cut', async () => {
    const events = Array.from({ length: 12 }, (_, i) => `data: {"jsonrpc":"2.0","id":7,"result":{"n":${i}}}\n\n`);
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let i = 0;
      const timer = setInterval(() => {
        res.write(events[i++]);
        if (i === events.length) {
          clearInterval(timer);
          res.end();
        }
      }, 50); // 12 × 50 ms is twice the idle timeout; each gap is a sixth of it
    };
    const res = await gw.request('POST', '/a2a/echo', SEND, { accept: 'text/event-stream' });
    assert.equal(res.body, events.join(''));
  });
});

describe('what reaches the runner, and answers that are not JSON-RPC', () => {
  const seen: Seen[] = [];
  let reply: (req: IncomingMessage, res: import('node:http').ServerResponse) => void = () => {};
  let gw: A2aGateway;
  let upstream: Awaited<ReturnType<typeof fakeUpstream>>;
  before(async () => {
    upstream = await fakeUpstream((req, res) => {
      void record(seen, req, res).then(() => reply(req, res));
    });
    gw = await startA2aGateway({ remote: ['echo'], options: { remoteRunner: { url: `${upstream.url}/`, token: 'runner-token' } } });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  const json = (status: number, body: string, type = 'application/json') => (_req: IncomingMessage, res: import('node:http').ServerResponse) => {
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  };

  it('the body as it came, A2A-Version byte for byte (and none invented), the runner’s bearer only', async () => {
    reply = json(200, '{"jsonrpc":"2.0","id":1,"result":{"kind":"message"}}');
    const body = '{ "jsonrpc" : "2.0",\n "id":1, "method":"message/send", "params":{"x":"\u00e9"} }';
    const withVersion = await gw.request('POST', '/a2a/echo', body, { 'A2A-Version': '1.0', 'x-other': 'dropped', cookie: 'c=1' });
    assert.equal(withVersion.status, 200);
    assert.equal(withVersion.body, '{"jsonrpc":"2.0","id":1,"result":{"kind":"message"}}');
    const withoutVersion = await gw.request('POST', '/a2a/echo', body);
    assert.equal(withoutVersion.status, 200);
    const [first, second] = seen.slice(-2);
    assert.equal(first!.body, body);
    assert.deepEqual(headerValues(first!.rawHeaders, 'a2a-version'), ['1.0']);
    assert.deepEqual(headerValues(second!.rawHeaders, 'a2a-version'), [], 'a genuine 0.3 client sends none, and none is added');
    for (const s of [first!, second!]) {
      assert.deepEqual(headerValues(s.rawHeaders, 'authorization'), ['Bearer runner-token']);
      assert.deepEqual(headerValues(s.rawHeaders, 'content-type'), ['application/json']);
      assert.deepEqual(headerValues(s.rawHeaders, 'x-other'), []);
      assert.deepEqual(headerValues(s.rawHeaders, 'cookie'), []);
      assert.ok(!s.rawHeaders.join('\n').includes(gw.gateway.token()), "the gateway's token never goes upstream");
    }
  });

  const bad: [string, (req: IncomingMessage, res: import('node:http').ServerResponse) => void, string][] = [
    ['an HTML page', json(200, '<html>hi</html>', 'text/html'), 'answered HTTP 200 (text/html) with no JSON-RPC response'],
    ['JSON that is not JSON-RPC', json(200, '{"ok":true}'), 'answered HTTP 200 (application/json) with no JSON-RPC response'],
    ['a refusal of its own (401 without JSON-RPC)', json(401, '{"error":"unauthorized"}'), 'answered HTTP 401 (application/json) with no JSON-RPC response'],
    ['both result and error', json(200, '{"jsonrpc":"2.0","id":7,"result":1,"error":{"code":1,"message":"m"}}'), 'answered HTTP 200 (application/json) with no JSON-RPC response'],
  ];
  for (const [what, answer, message] of bad) {
    it(`${what}: 502 with a clear JSON-RPC error and its row`, async () => {
      reply = answer;
      const res = await gw.request('POST', '/a2a/echo', SEND);
      assert.equal(res.status, 502);
      assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: 7, error: { code: -32603, message: `the remote runner at ${upstream.url} ${message}` } });
      assert.equal(gw.rows.at(-1)?.reason, `the remote runner at ${upstream.url} ${message}`);
    });
  }

  it("a JSON-RPC error the runner answers with its own status passes through as it is", async () => {
    reply = json(500, '{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"runner broke"}}');
    const res = await gw.request('POST', '/a2a/echo', SEND);
    assert.equal(res.status, 500);
    assert.equal(res.body, '{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"runner broke"}}');
  });

  it('an empty 202 or 204 (nothing owed) passes as it is', async () => {
    for (const status of [202, 204]) {
      reply = (_req, res) => {
        res.writeHead(status);
        res.end();
      };
      const res = await gw.request('POST', '/a2a/echo', { jsonrpc: '2.0', method: 'notifications/anything' });
      assert.equal(res.status, status);
      assert.equal(res.body, '');
    }
  });

  it('an event stream: good events pass as they came; a bad one ends the stream with an error event and the upstream request', async () => {
    const good = 'id: 1\ndata: {"jsonrpc":"2.0","id":7,"result":{"kind":"task"}}\n\n: a comment\n\n';
    let upstreamClosed: Promise<void> | undefined;
    reply = (_req, res) => {
      upstreamClosed = seen.at(-1)!.closedEarly;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(good);
      res.write('data: not json at all\n\n');
      // and would go on: the gateway hangs up on it
    };
    const res = await gw.request('POST', '/a2a/echo', SEND, { accept: 'text/event-stream' });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'text/event-stream');
    const error = { jsonrpc: '2.0', id: 7, error: { code: -32603, message: 'the remote runner sent a stream event that is not a JSON-RPC response' } };
    assert.equal(res.body, `${good}event: error\ndata: ${JSON.stringify(error)}\n\n`);
    await upstreamClosed;
  });

  it('a stream that breaks off ends with an error event', async () => {
    reply = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"jsonrpc":"2.0","id":7,"result":{}}\n\n', () => res.destroy());
    };
    const res = await gw.request('POST', '/a2a/echo', SEND, { accept: 'text/event-stream' });
    assert.equal(res.status, 200);
    const [first, second] = res.body.split('\n\n');
    assert.equal(first, 'data: {"jsonrpc":"2.0","id":7,"result":{}}');
    assert.match(second!, /^event: error\ndata: .*the remote runner's stream broke off/);
  });
});

describe('the SDK runner with a wrong token', () => {
  it("is a 502 (the runner's 401 is not JSON-RPC), the SDK client sees it", async () => {
    const runner = await new A2aRunner({ token: 'right' }).start();
    const gw = await startA2aGateway({ remote: ['echo'], options: { remoteRunner: { url: runner.url, token: 'wrong' } } });
    try {
      const client = await gw.client('echo', '1.0');
      await assert.rejects(client.sendMessage({ tenant: '', message: userMessage('hi'), configuration: undefined, metadata: undefined }), /answered HTTP 401/);
    } finally {
      await gw.close();
      await runner.close();
    }
  });
});

describe('remoteRunner option', () => {
  it('is checked when the gateway is made', () => {
    const none = { list: () => [] };
    assert.throws(() => new ProtocolGateway(none, { remoteRunner: { url: 'ftp://127.0.0.1/' } }), /remoteRunner\.url: must be an http: or https: URL/);
    assert.throws(() => new ProtocolGateway(none, { remoteRunner: { url: 'http://user:pw@127.0.0.1/' } }), /without credentials/);
    assert.throws(() => new ProtocolGateway(none, { remoteRunner: { url: 'http://127.0.0.1/', firstByteTimeoutMs: 0 } }), /remoteRunner\.firstByteTimeoutMs/);
    assert.throws(() => new ProtocolGateway(none, { remoteRunner: { url: 'http://127.0.0.1/', idleTimeoutMs: -1 } }), /remoteRunner\.idleTimeoutMs/);
  });
});

describe('a client that hangs up before the answer', () => {
  it('aborts the upstream request at once (a blocking send that is still running)', async () => {
    const runner = await new A2aRunner().start();
    const gw = await startA2aGateway({ remote: ['echo'], options: { remoteRunner: { url: runner.url } } });
    try {
      const seen = runner.nextRequest();
      const req = request({
        socketPath: gw.socketPath,
        method: 'POST',
        path: '/a2a/echo',
        headers: { ...gw.auth, 'content-type': 'application/json', 'a2a-version': '0.3' },
        agent: false,
      });
      req.on('error', () => {});
      req.end(JSON.stringify({ ...SEND, params: { message: { ...SEND.params.message, parts: [{ kind: 'text', text: 'hang' }] } } }));
      const upstream = await seen;
      assert.equal(upstream.method, 'message/send');
      req.destroy();
      await upstream.aborted;
      assert.equal(upstream.wasAborted(), true);
      const row = await rowFor(gw, '/a2a/echo');
      assert.equal(row.reason, 'a2a: the client hung up; the upstream request was aborted');
    } finally {
      await gw.close();
      await runner.close();
    }
  });
});

/** The row for `path`, when the gateway has written it. */
function rowFor(gw: A2aGateway, path: string): Promise<EdgeRow> {
  const row = rowsFor(gw.rows, path).at(-1);
  if (row) return Promise.resolve(row);
  return new Promise((resolve) => {
    const off = gw.gateway.onEdge((r) => {
      if (r.path !== path) return;
      off();
      resolve(r);
    });
  });
}
