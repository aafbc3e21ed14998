import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { PluginLoadError, parseManifest } from '../../main/plugins/index.js';
import { AllowList } from '../../main/plugins/network/allow-list.js';
import type { NetworkRequest } from '../../main/plugins/network/exchange.js';
import { checkTarget, runRequest, targetLabel, type Resolve } from '../../main/plugins/network/run-request.js';
import { NETWORK_REFUSAL_KEY } from '../../main/plugins/network/refusal-key.js';
import { wasiHttp } from '../../main/plugins/network/wasi-http.js';

/**
 * What a hostile plugin author would try against the allow-list: a listed name of their own that
 * DNS points into this machine or the cloud's metadata address, methods and header values the
 * host's HTTP client cannot send, secrets in URLs that do not parse, a slow chain of redirects.
 * All through `runRequest` against a real node:http server on 127.0.0.1.
 */
describe('the network allow-list against a hostile plugin', () => {
  let server: Server;
  let port: number;
  const seen: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      const hop = /^\/hop\/(\d+)$/.exec(req.url ?? '');
      // A server that answers each hop slowly: 150 ms, then a redirect to the next hop.
      if (hop) return void setTimeout(() => res.writeHead(302, { location: `/hop/${Number(hop[1]) + 1}` }).end(), 150);
      if (req.url === '/large-file') return void res.writeHead(200, { 'content-length': String(2 * 1024 * 1024) }).end(req.method === 'HEAD' ? undefined : Buffer.alloc(2 * 1024 * 1024));
      if (req.url === '/bad-location') return void res.writeHead(302, { location: 'http://[bad/secret-path?token=SECRET' }).end();
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server?.close());

  const resolveTo = (...addresses: string[]): Resolve => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  const get = (url: string): NetworkRequest => ({ method: 'GET', url, headers: [], body: null });
  const run = (request: NetworkRequest, allow: string[], resolve: Resolve = resolveTo('127.0.0.1'), timeoutMs = 5_000) =>
    runRequest(request, { allow: new AllowList(allow), maxBodyBytes: 1024, timeoutMs, resolve });

  it('a listed name that DNS points at loopback or the metadata address is refused unless the list names that address too', async () => {
    seen.length = 0;
    const url = `http://data.plugin-author.test:${port}/`;
    const own = [`data.plugin-author.test:${port}`];
    for (const address of ['127.0.0.1', '169.254.169.254', '10.0.0.1']) {
      const answer = await run(get(url), own, resolveTo(address));
      assert.deepEqual(!answer.ok && answer.error, { tag: 'destination-IP-prohibited' }, address);
      assert.match(!answer.ok ? answer.message : '', new RegExp(`^network: data\\.plugin-author\\.test resolves to ${address.replaceAll('.', '\\.')} \\(`));
    }
    assert.deepEqual(seen, [], 'nothing was sent');
    // The person granted the address itself: the name may reach it.
    const listed = await run(get(url), [...own, `127.0.0.1:${port}`]);
    assert.deepEqual(listed.ok && listed.status, 200);
    // `localhost` is loopback by definition (RFC 6761): naming it is naming loopback, and only that.
    const local = await run(get(`http://localhost:${port}/`), [`localhost:${port}`], resolveTo('127.0.0.1', '::1'));
    assert.deepEqual(local.ok && local.status, 200);
    const odd = await run(get(`http://localhost:${port}/`), [`localhost:${port}`], resolveTo('10.0.0.1'));
    assert.deepEqual(!odd.ok && odd.error, { tag: 'destination-IP-prohibited' });
  });

  it('CONNECT, TRACE and TRACK are refused before anything is sent', async () => {
    seen.length = 0;
    for (const method of ['CONNECT', 'TRACE', 'track']) {
      const answer = await run({ ...get(`http://127.0.0.1:${port}/`), method }, [`127.0.0.1:${port}`], resolveTo(), 1_000);
      assert.deepEqual(!answer.ok && [answer.error, answer.message], [{ tag: 'HTTP-request-method-invalid' }, `network: the method ${method} may not be sent`]);
    }
    assert.deepEqual(seen, []);
  });

  it('a header value the HTTP client cannot send is a clear refusal, not a lost request', async () => {
    seen.length = 0;
    for (const value of ['\u0001', '€']) {
      const answer = await run({ ...get(`http://127.0.0.1:${port}/`), headers: [['x-token', value]] }, [`127.0.0.1:${port}`]);
      assert.deepEqual(!answer.ok && [answer.error.tag, answer.message], ['internal-error', `network: 127.0.0.1:${port}: the request could not be sent (ERR_INVALID_CHAR)`]);
    }
    assert.deepEqual(seen, []);
  });

  it('a URL that does not parse is named by its scheme and host only: no path, query or password in the reason or the log', async () => {
    const refused = checkTarget(new AllowList(['api.example.com']), 'GET', 'http://user:pw@a:b:c/secret-path?token=SECRET');
    assert.ok('ok' in refused);
    assert.equal(refused.message, 'network: "http://a:b:c" is not a URL');
    assert.equal(targetLabel('http://user:pw@a:b:c/secret-path?token=SECRET'), '"http://a:b:c"');
    const bounced = await run(get(`http://127.0.0.1:${port}/bad-location`), [`127.0.0.1:${port}`]);
    assert.deepEqual(!bounced.ok && [bounced.message, bounced.target], [`network: 127.0.0.1:${port} redirected to "http://[bad": "http://[bad" is not a URL`, '"http://[bad"']);
  });

  it("one clock for the whole request: redirects do not each get a fresh timeout", async () => {
    seen.length = 0;
    const started = performance.now();
    const answer = await run(get(`http://127.0.0.1:${port}/hop/1`), [`127.0.0.1:${port}`], resolveTo(), 400);
    assert.deepEqual(!answer.ok && [answer.error, answer.message], [{ tag: 'HTTP-response-timeout' }, `network: 127.0.0.1:${port} did not answer within 400 ms`]);
    // A fresh 400 ms clock per hop lets every 150 ms hop through, 21 of them (3 s and more), to
    // loop-detected: the answer and the hops seen catch that, not the clock. The bound is a hang
    // guard, generous for a loaded machine.
    assert.ok(performance.now() - started < 10_000);
    assert.ok(seen.length <= 3, seen.join(', '));
  });

  it('a guest writing a huge run of zeroes is refused as too large, without the host allocating it', () => {
    class Stream {}
    const refusedBodies: number[] = [];
    const http = wasiHttp({ InputStream: Stream, OutputStream: Stream, readyPollable: () => ({}) }, {
      send: () => assert.fail('nothing may be sent'),
      refuse: () => null,
      maxRequestBodyBytes: 1024,
      refuseBody: (_method, _url, bytes) => (refusedBodies.push(bytes), { tag: 'HTTP-request-body-size', val: BigInt(bytes) }),
    });
    type Ctor = new (...args: unknown[]) => Record<string, (...args: unknown[]) => unknown>;
    const types = http['wasi:http/types']! as unknown as { Fields: Ctor; OutgoingRequest: Ctor; OutgoingBody: { finish(body: unknown, trailers: undefined): void } };
    const request = new types.OutgoingRequest(new types.Fields());
    request['setAuthority']!(`127.0.0.1:${port}`);
    request['setScheme']!({ tag: 'HTTP' });
    const body = request['body']!();
    const stream = (body as { write(): Record<string, (n: bigint) => void> }).write();
    stream['blockingWriteZeroesAndFlush']!(2n ** 40n);
    types.OutgoingBody.finish(body, undefined);
    const future = (http['wasi:http/outgoing-handler']!['handle'] as (r: unknown) => { get(): unknown })(request);
    assert.deepEqual(future.get(), { tag: 'ok', val: { tag: 'err', val: { tag: 'HTTP-request-body-size', val: 2n ** 40n } } });
    assert.deepEqual(refusedBodies, [2 ** 40]);
  });

  it('a HEAD answer has no body: its Content-Length is not held against the budget', async () => {
    const head = await run({ ...get(`http://127.0.0.1:${port}/large-file`), method: 'HEAD' }, [`127.0.0.1:${port}`]);
    assert.deepEqual(head.ok && [head.status, head.body.length], [200, 0]);
    const body = await run(get(`http://127.0.0.1:${port}/large-file`), [`127.0.0.1:${port}`]);
    assert.deepEqual(!body.ok && body.error.tag, 'HTTP-response-body-size');
  });

  it('other spellings of a host are the host they spell: compared after URL parsing, never as written', () => {
    const list = new AllowList(['api.example.com', '127.0.0.1:8080']);
    const verdict = (url: string) => {
      const t = checkTarget(list, 'GET', url);
      return 'ok' in t ? t.message.replace(/^network: /, '') : `${t.label} allowed`;
    };
    assert.deepEqual(
      ['HTTPS://API.Example.COM:0443/', 'https://api.example.com./', 'https://api.example.com@evil.test/', 'https://evil.test\\@api.example.com/', 'http://0x7f.1:8080/', 'http://2130706433:8080/', 'http://127.1:8080/', 'http://[::ffff:127.0.0.1]:8080/', 'http://[fe80::1%25eth0]:8080/'].map(verdict),
      [
        'api.example.com:443 allowed',
        "api.example.com.:443 is not on the plugin's [network] allow list",
        'a URL with a user name or password is not sent',
        "evil.test:443 is not on the plugin's [network] allow list",
        '127.0.0.1:8080 allowed',
        '127.0.0.1:8080 allowed',
        '127.0.0.1:8080 allowed',
        "[::ffff:7f00:1]:8080 is not on the plugin's [network] allow list",
        '"http://[fe80::1%25eth0]:8080" is not a URL',
      ],
    );
  });

  it("no manifest holds the key the host's refusal reason is read under (a [config] key with a control character is refused)", () => {
    const toml = `[module]\nname = "m"\nversion = "1.0.0"\nwasm = "plugin.wasm"\n[config]\n${JSON.stringify(NETWORK_REFUSAL_KEY)} = "spoofed"\n`;
    assert.throws(() => parseManifest(toml), (err: unknown) => err instanceof PluginLoadError && err.message === 'module.toml: [config]: the key "\\u0000chatty:network-refusal" has a control character');
  });
});
