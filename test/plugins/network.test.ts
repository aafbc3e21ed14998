import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry, PluginCallError, ensureExamplesBuilt, type ModuleHandle, type ScanReport } from '../../main/plugins/index.js';
import { AllowList } from '../../main/plugins/network/allow-list.js';
import { runRequest, type Resolve } from '../../main/plugins/network/run-request.js';
import { TEST_CACHE_DIR } from '../helpers/wasm-fixtures.js';

/**
 * The guest's fetch in a real component built by `plugin build`, against a real node:http server
 * on 127.0.0.1 that the allow-list names. The tool answers what fetch gave it — the status and
 * body, or the error fetch rejected with — so each refusal is asserted as the guest sees it.
 */
const FETCHER = `
export const plugin = {
  metadata() {
    return { name: 'fetcher', version: '0.1.0', description: 'fetches', requestedCapabilities: ['logging'], configKeys: [] };
  },
  listTools() {
    return [{ name: 'fetch', description: 'Fetches a URL.', parametersSchema: '{}' }];
  },
  async invokeTool(call) {
    const { url, init } = JSON.parse(call.argumentsJson);
    try {
      const res = await fetch(url, init);
      const text = await res.text();
      return { content: JSON.stringify({ status: res.status, url: res.url, redirected: res.redirected, body: text.length > 100 ? text.length + ' chars' : text }) };
    } catch (err) {
      return { content: JSON.stringify({ error: String(err), name: err && err.name, message: err && err.message, cause: err && err.cause ? String(err.cause) : undefined }) };
    }
  },
};
`;

/** The deadline test's max_execution_ms. */
const DEADLINE_MS = 10_000;

const manifest = (name: string, extra = ''): string => `[module]\nname = "${name}"\nversion = "0.1.0"\nwasm = "plugin.wasm"\n\n[protocols]\nmcp = true\n${extra}`;

function writePlugin(parent: string, name: string): void {
  const dir = join(parent, name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'module.toml'), manifest(name));
  writeFileSync(join(dir, 'src', 'plugin.js'), FETCHER);
}

describe("a plugin's fetch reaches only its [network] allow list", () => {
  let root: string;
  let server: Server;
  let port: number;
  let registry: ModuleRegistry;
  let report: ScanReport;
  let modulesDir: string;
  let online: ModuleHandle;
  let offline: ModuleHandle;
  const seen: string[] = [];
  let onSlowClose: () => void = () => {};
  let slowSeen: () => void = () => {};
  let slowArrived: Promise<void> = Promise.resolve();
  let slowClosed: Promise<void> = Promise.resolve();
  const logs: { level: string; message: string; module?: unknown }[] = [];

  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      seen.push(`${req.method} ${req.url} host=${req.headers.host}`);
      req.url = new URL(req.url ?? '/', 'http://x').pathname;
      if (req.url === '/hello') return void res.end('hello from the server');
      if (req.url === '/redirect-off') return void res.writeHead(302, { location: 'http://elsewhere.invalid/' }).end();
      if (req.url === '/redirect-on') return void res.writeHead(302, { location: '/hello' }).end();
      if (req.url === '/big') return void res.end(Buffer.alloc(1024 * 1024 + 1, 'x'));
      if (req.url === '/half') return void res.end(Buffer.alloc(512 * 1024, 'x'));
      if (req.url === '/big-chunked') {
        res.writeHead(200, { 'content-type': 'text/plain' }); // no length: the cap is found while reading
        for (let i = 0; i < 17; i++) res.write(Buffer.alloc(64 * 1024, 'x'));
        return void res.end();
      }
      if (req.url === '/echo') {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        return void req.on('end', () => res.end(`${req.method} ${req.headers['content-type']} ${body}`));
      }
      if (req.url === '/slow') {
        res.socket?.on('close', () => onSlowClose());
        return void slowSeen();
      }
      res.writeHead(404).end('no');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    root = mkdtempSync(join(tmpdir(), 'chatty-network-'));
    // Two plugins of the same source: one with a list naming the server, one without [network].
    // The list goes in after the build, so the server's port does not make every run rebuild.
    writePlugin(root, 'fetcher');
    writePlugin(root, 'offline');
    // Built into a cache of this run's own: the server's port is written into the built copy below,
    // and two runs sharing one cache (a fixed path in /tmp) wrote each other's port there.
    modulesDir = await ensureExamplesBuilt(root, { cacheDir: join(root, '.examples-cache') });
    writeFileSync(join(modulesDir, 'fetcher', 'module.toml'), manifest('fetcher', `\n[network]\nallow = ["127.0.0.1:${port}", "*.example.org"]\n`));
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: (level, message, fields) => logs.push({ level, message, module: fields?.module }) } });
    report = await registry.scanDirectory(modulesDir);
    online = registry.get('fetcher')!;
    offline = registry.get('offline')!;
  });
  after(async () => {
    await registry?.close();
    server?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const fetchIn = async (handle: ModuleHandle, url: string, init?: object): Promise<Record<string, unknown>> => {
    const outcome = await handle.invokeTool({ name: 'fetch', argumentsJson: JSON.stringify({ url, init }), callId: url });
    assert.ok(outcome.ok, JSON.stringify(outcome));
    return JSON.parse(outcome.value.content) as Record<string, unknown>;
  };

  const denied = (target: string) => `network: ${target} is not on the plugin's [network] allow list`;
  const networkLines = (module: string) => logs.filter((l) => l.module === module && l.message.startsWith('network: ')).map((l) => `${l.level} ${l.message}`);

  it('a request to a host and port on the list works, and is logged (host, method, status, bytes; no path)', async () => {
    assert.deepEqual(report.failed, []);
    logs.length = 0;
    seen.length = 0;
    assert.deepEqual(await fetchIn(online, `http://127.0.0.1:${port}/hello?token=secret`), {
      status: 200, url: `http://127.0.0.1:${port}/hello?token=secret`, redirected: false, body: 'hello from the server',
    });
    assert.deepEqual(seen, [`GET /hello?token=secret host=127.0.0.1:${port}`]);
    assert.deepEqual(networkLines('fetcher'), [`info network: GET 127.0.0.1:${port} → 200, 21 bytes`]);
    // A body goes out with its method.
    assert.equal((await fetchIn(online, `http://127.0.0.1:${port}/echo`, { method: 'POST', body: 'abc', headers: { 'content-type': 'text/plain' } })).body, 'POST text/plain abc');
  });

  it('a host not on the list is refused before anything is sent, the reason in the rejection and the log', async () => {
    logs.length = 0;
    seen.length = 0;
    assert.deepEqual(await fetchIn(online, `http://localhost:${port}/hello`), {
      error: `TypeError: ${denied(`localhost:${port}`)}`, name: 'TypeError', message: denied(`localhost:${port}`), cause: 'TypeError: NetworkError when attempting to fetch resource',
    });
    assert.equal((await fetchIn(online, 'https://api.example.com/')).message, denied('api.example.com:443'));
    assert.deepEqual(seen, []);
    assert.deepEqual(networkLines('fetcher'), [
      `warn network: GET localhost:${port} refused: ${denied(`localhost:${port}`).slice('network: '.length)}`,
      `warn network: GET api.example.com:443 refused: ${denied('api.example.com:443').slice('network: '.length)}`,
    ]);
  });

  it('an IP literal or a port the list does not name is refused', async () => {
    seen.length = 0;
    assert.equal((await fetchIn(online, `http://127.0.0.2:${port}/hello`)).message, denied(`127.0.0.2:${port}`));
    assert.equal((await fetchIn(online, `http://127.0.0.1:${port + 1}/hello`)).message, denied(`127.0.0.1:${port + 1}`));
    assert.equal((await fetchIn(online, `http://[::1]:${port}/hello`)).message, denied(`[::1]:${port}`));
    assert.equal((await fetchIn(online, `http://[::ffff:127.0.0.1]:${port}/hello`)).message, denied(`[::ffff:7f00:1]:${port}`));
    assert.deepEqual(seen, []);
  });

  it('a redirect is followed only while it stays on the list', async () => {
    seen.length = 0;
    logs.length = 0;
    assert.equal((await fetchIn(online, `http://127.0.0.1:${port}/redirect-on`)).body, 'hello from the server');
    assert.deepEqual(await fetchIn(online, `http://127.0.0.1:${port}/redirect-off`), {
      error: `TypeError: network: 127.0.0.1:${port} redirected to elsewhere.invalid:80: elsewhere.invalid:80 is not on the plugin's [network] allow list`,
      name: 'TypeError',
      message: `network: 127.0.0.1:${port} redirected to elsewhere.invalid:80: elsewhere.invalid:80 is not on the plugin's [network] allow list`,
      cause: 'TypeError: NetworkError when attempting to fetch resource',
    });
    assert.deepEqual(seen, [`GET /redirect-on host=127.0.0.1:${port}`, `GET /hello host=127.0.0.1:${port}`, `GET /redirect-off host=127.0.0.1:${port}`]);
    assert.deepEqual(networkLines('fetcher'), [
      `info network: GET 127.0.0.1:${port} → 302, 0 bytes`,
      `info network: GET 127.0.0.1:${port} → 200, 21 bytes`,
      `info network: GET 127.0.0.1:${port} → 302, 0 bytes`,
      `warn network: GET elsewhere.invalid:80 refused: 127.0.0.1:${port} redirected to elsewhere.invalid:80: elsewhere.invalid:80 is not on the plugin's [network] allow list`,
    ]);
  });

  it('a response body over the 1 MiB budget of the call is refused, and a request body over 1 MiB', async () => {
    const budget = 'the response body from 127.0.0.1:' + port + ' is over the 1048576-byte budget of this call';
    assert.equal((await fetchIn(online, `http://127.0.0.1:${port}/big`)).message, `network: ${budget}`);
    assert.equal((await fetchIn(online, `http://127.0.0.1:${port}/big-chunked`)).message, `network: ${budget}`);
    seen.length = 0;
    assert.equal(
      (await fetchIn(online, `http://127.0.0.1:${port}/echo`, { method: 'POST', body: 'x'.repeat(1024 * 1024 + 1) })).message,
      'network: the request body (1048577 bytes) is over the 1048576-byte limit',
    );
    assert.deepEqual(seen, [], 'nothing was sent');
    // The budget is per call: the next call starts with a full one.
    assert.equal((await fetchIn(online, `http://127.0.0.1:${port}/half`)).body, `${512 * 1024} chars`);
  });

  it('a plugin without [network] reaches nothing', async () => {
    seen.length = 0;
    logs.length = 0;
    const none = "network: this plugin has no network access (its module.toml has no [network] allow list, or it was not granted)";
    assert.equal((await fetchIn(offline, `http://127.0.0.1:${port}/hello`)).message, none);
    assert.equal((await fetchIn(offline, 'https://api.example.com/')).message, none);
    assert.deepEqual(seen, []);
    assert.equal(networkLines('offline').length, 2);
  });

  // Both tests below wait for their server to see a request end. A request that never reached it
  // (refused: a module.toml naming another run's port; or, at load 22, a 1.5 s clock that ran out
  // while the call started its fetch thread) left each waiting for good (node:test has no default
  // timeout: a run stalled ~17 minutes). Now the request's arrival is asserted first, and 180 s
  // is a hang guard.
  it("a call past its max_execution_ms ends its request: the deadline times the fetch too", { timeout: 180_000 }, async () => {
    // The same component under another manifest: a 10 s clock, long enough for the call to start
    // its fetch thread and send the request on a loaded machine (1.5 s was not, at load 22).
    const dir = join(root, 'deadline');
    cpSync(join(modulesDir, 'fetcher'), dir, { recursive: true });
    writeFileSync(join(dir, 'module.toml'), manifest('deadline', `\n[resources]\nmax_execution_ms = ${DEADLINE_MS}\n\n[network]\nallow = ["127.0.0.1:${port}"]\n`));
    await registry.loadModule(dir);
    const handle = registry.get('deadline')!;
    slowClosed = new Promise<void>((resolve) => (onSlowClose = resolve));
    seen.length = 0;
    const started = performance.now();
    await assert.rejects(
      handle.invokeTool({ name: 'fetch', argumentsJson: JSON.stringify({ url: `http://127.0.0.1:${port}/slow` }), callId: 'deadline' }),
      (err: unknown) => err instanceof PluginCallError && err.kind === 'timeout',
    );
    assert.deepEqual(seen.map((l) => l.split(' ').slice(0, 2).join(' ')), ['GET /slow'], 'the request reached the server');
    await slowClosed;
    const ms = performance.now() - started;
    // Not before its clock; a request the deadline did not end stays open for good (the server
    // never answers), so the upper bound only guards a hang: 60 s, however loaded the machine.
    assert.ok(ms >= DEADLINE_MS && ms < 60_000, `${ms} ms`);
    console.log(`# a request to a server that never answers ended with its call, ${Math.round(ms)} ms after the call started (max_execution_ms ${DEADLINE_MS})`);
  });

  it('a cancelled call ends its request: the connection closes with the guest', { timeout: 180_000 }, async () => {
    const controller = new AbortController();
    slowArrived = new Promise<void>((resolve) => (slowSeen = resolve));
    const closed = new Promise<void>((resolve) => (onSlowClose = resolve));
    const pending = online.invokeTool({ name: 'fetch', argumentsJson: JSON.stringify({ url: `http://127.0.0.1:${port}/slow` }), callId: 'slow' }, { signal: controller.signal });
    // The request reaches the server, or the call ends first and the test says so (not a wait for good).
    await Promise.race([slowArrived, pending.then((outcome) => assert.fail(`the call ended before its request reached the server: ${JSON.stringify(outcome)}`))]);
    controller.abort();
    await assert.rejects(pending, (err: unknown) => err instanceof PluginCallError && err.kind === 'cancelled');
    await closed;
    assert.equal((await fetchIn(online, `http://127.0.0.1:${port}/hello`)).body, 'hello from the server');
  });
});

describe('runRequest: names are resolved, each address checked, and the checked address connected to', () => {
  let server: Server;
  let port: number;
  const seen: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} host=${req.headers.host}`);
      if (req.url === '/to-wildcard') return void res.writeHead(307, { location: `http://api.example.test:${port}/` }).end();
      if (req.url === '/see-other') return void res.writeHead(303, { location: '/landed' }).end('moved');
      if (req.url === '/to-other-origin') return void res.writeHead(307, { location: `http://other.example.test:${port}/landed` }).end();
      seen.push(`  authorization=${req.headers.authorization ?? '-'} content-type=${req.headers['content-type'] ?? '-'} length=${req.headers['content-length'] ?? '-'}`);
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server?.close());

  /** A resolver for names that exist nowhere else (no internet here), counting its lookups. */
  const lookups: string[] = [];
  const resolveTo = (...addresses: string[]): Resolve => async (name) => {
    lookups.push(name);
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const run = (url: string, allow: string[], resolve: Resolve) =>
    runRequest({ method: 'GET', url, headers: [], body: null }, { allow: new AllowList(allow), maxBodyBytes: 1024, timeoutMs: 5_000, resolve });

  const local = (name: string, address: string, range: string) =>
    `network: ${name} resolves to ${address} (${range}), an address the plugin's [network] allow list does not name; a name reaches a local address only when the list names that address too (e.g. "127.0.0.1:8080")`;

  it('a name the list admits may not resolve to loopback or a private address the list does not name', async () => {
    seen.length = 0;
    const refused = await run(`http://api.example.test:${port}/`, [`*.example.test:${port}`], resolveTo('127.0.0.1'));
    assert.equal(refused.ok, false);
    assert.deepEqual(!refused.ok && [refused.error, refused.message], [
      { tag: 'destination-IP-prohibited' },
      local('api.example.test', '127.0.0.1', 'loopback'),
    ]);
    // Named exactly is no different: the name's owner controls its DNS.
    const exact = await run(`http://svc.example.test:${port}/`, [`svc.example.test:${port}`], resolveTo('127.0.0.1'));
    assert.equal(!exact.ok && exact.message, local('svc.example.test', '127.0.0.1', 'loopback'));
    // One private answer among public ones is enough to refuse: the name is not half-used.
    const mixed = await run(`http://api.example.test:${port}/`, [`*.example.test:${port}`], resolveTo('203.0.113.5', '10.1.2.3'));
    assert.equal(!mixed.ok && mixed.message, local('api.example.test', '10.1.2.3', 'private'));
    assert.deepEqual(seen, []);
  });

  it('a name reaches a local address the list names too; the connection goes to the address checked, the name in Host', async () => {
    seen.length = 0;
    lookups.length = 0;
    const answer = await run(`http://svc.example.test:${port}/x`, [`svc.example.test:${port}`, `127.0.0.1:${port}`], resolveTo('127.0.0.1'));
    assert.deepEqual(answer.ok && [answer.status, Buffer.from(answer.body).toString()], [200, 'ok']);
    // svc.example.test exists in no DNS: the request reached the server only through the checked address.
    assert.deepEqual(lookups, ['svc.example.test']);
    assert.deepEqual(seen, [`GET /x host=svc.example.test:${port}`, '  authorization=- content-type=- length=-']);
  });

  it('each redirect hop is checked like the first request', async () => {
    seen.length = 0;
    // svc is 127.0.0.1, which the list names; api (the redirect's target) is 10.1.2.3, which it does not.
    const byName: Resolve = async (name) => (lookups.push(name), [{ address: name === 'svc.example.test' ? '127.0.0.1' : '10.1.2.3', family: 4 }]);
    const answer = await run(`http://svc.example.test:${port}/to-wildcard`, [`svc.example.test:${port}`, `*.example.test:${port}`, `127.0.0.1:${port}`], byName);
    assert.deepEqual(!answer.ok && [answer.error, answer.message, answer.hops], [
      { tag: 'destination-IP-prohibited' },
      local('api.example.test', '10.1.2.3', 'private'),
      [{ method: 'GET', target: `svc.example.test:${port}`, status: 307, bytes: 0 }],
    ]);
    assert.deepEqual(seen, [`GET /to-wildcard host=svc.example.test:${port}`]);
  });

  it("https: the name goes in TLS's server name, and a certificate no authority signed is refused", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatty-network-tls-'));
    const names: (string | undefined)[] = [];
    let tls: HttpsServer | undefined;
    try {
      // A certificate for svc.example.test that no authority signed: the connection must fail on it.
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=svc.example.test', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
      tls = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')), SNICallback: (name, cb) => (names.push(name), cb(null)) }, (_req, res) => res.end('secret'));
      await new Promise<void>((resolve) => tls!.listen(0, '127.0.0.1', resolve));
      const tlsPort = (tls.address() as AddressInfo).port;
      const answer = await run(`https://svc.example.test:${tlsPort}/`, [`svc.example.test:${tlsPort}`, `127.0.0.1:${tlsPort}`], resolveTo('127.0.0.1'));
      assert.deepEqual(!answer.ok && [answer.error, answer.message], [{ tag: 'TLS-certificate-error' }, `network: svc.example.test:${tlsPort}: DEPTH_ZERO_SELF_SIGNED_CERT`]);
      assert.deepEqual(names, ['svc.example.test']);
    } finally {
      tls?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a 303 after a POST becomes a GET without a body; credentials do not follow to another origin', async () => {
    seen.length = 0;
    const allow = [`svc.example.test:${port}`, `other.example.test:${port}`, `127.0.0.1:${port}`];
    const post = { method: 'POST', headers: [['Content-Type', 'text/plain'], ['Authorization', 'Bearer t0k']] as [string, string][], body: new TextEncoder().encode('abc') };
    const seeOther = await runRequest({ ...post, url: `http://svc.example.test:${port}/see-other` }, { allow: new AllowList(allow), maxBodyBytes: 1024, timeoutMs: 5_000, resolve: resolveTo('127.0.0.1') });
    assert.deepEqual(seeOther.ok && [seeOther.method, seeOther.status, seeOther.hops], ['GET', 200, [{ method: 'POST', target: `svc.example.test:${port}`, status: 303, bytes: 5 }]]);
    const moved = await runRequest({ ...post, url: `http://svc.example.test:${port}/to-other-origin` }, { allow: new AllowList(allow), maxBodyBytes: 1024, timeoutMs: 5_000, resolve: resolveTo('127.0.0.1') });
    assert.deepEqual(moved.ok && [moved.method, moved.status], ['POST', 200]);
    assert.deepEqual(seen, [
      `POST /see-other host=svc.example.test:${port}`,
      `GET /landed host=svc.example.test:${port}`,
      '  authorization=Bearer t0k content-type=- length=-',
      `POST /to-other-origin host=svc.example.test:${port}`,
      `POST /landed host=other.example.test:${port}`,
      '  authorization=- content-type=text/plain length=3',
    ]);
  });

  it('without an allow list nothing is resolved or sent', async () => {
    lookups.length = 0;
    const answer = await runRequest({ method: 'GET', url: `http://127.0.0.1:${port}/`, headers: [], body: null }, { allow: null, maxBodyBytes: 1024, timeoutMs: 5_000, resolve: resolveTo('127.0.0.1') });
    assert.deepEqual(!answer.ok && answer.error, { tag: 'HTTP-request-denied' });
    assert.deepEqual(lookups, []);
  });
});
