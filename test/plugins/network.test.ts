import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry, ensureExamplesBuilt, type ModuleHandle, type ScanReport } from '../../main/plugins/index.js';
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

function writePlugin(parent: string, name: string, network: string): void {
  const dir = join(parent, name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'module.toml'), `[module]\nname = "${name}"\nversion = "0.1.0"\nwasm = "plugin.wasm"\n\n[protocols]\nmcp = true\n${network}`);
  writeFileSync(join(dir, 'src', 'plugin.js'), FETCHER);
}

describe("a plugin's fetch reaches only its [network] allow list", () => {
  let root: string;
  let server: Server;
  let port: number;
  let registry: ModuleRegistry;
  let report: ScanReport;
  let online: ModuleHandle;
  let offline: ModuleHandle;
  const seen: string[] = [];
  const logs: { level: string; message: string; module?: unknown }[] = [];

  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      seen.push(`${req.method} ${req.url} host=${req.headers.host}`);
      if (req.url === '/hello') return void res.end('hello from the server');
      if (req.url === '/redirect-off') return void res.writeHead(302, { location: 'http://elsewhere.invalid/' }).end();
      if (req.url === '/redirect-on') return void res.writeHead(302, { location: '/hello' }).end();
      if (req.url === '/big') return void res.end(Buffer.alloc(1024 * 1024 + 1, 'x'));
      res.writeHead(404).end('no');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    root = mkdtempSync(join(tmpdir(), 'chatty-network-'));
    // Two plugins of the same source (one build): one with a list naming the server, one without [network].
    writePlugin(root, 'fetcher', `\n[network]\nallow = ["127.0.0.1:${port}", "*.example.org"]\n`);
    writePlugin(root, 'offline', '');
    const modulesDir = await ensureExamplesBuilt(root, { cacheDir: join(tmpdir(), 'chatty-gateway-test-network') });
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

  it('experiment', async () => {
    assert.deepEqual(report.failed, []);
    console.log(await fetchIn(online, `http://127.0.0.1:${port}/hello`));
    console.log(await fetchIn(online, `http://localhost:${port}/hello`));
    console.log(await fetchIn(online, `http://127.0.0.1:${port}/redirect-off`));
    console.log(await fetchIn(online, `http://127.0.0.1:${port}/redirect-on`));
    console.log(await fetchIn(online, `http://127.0.0.1:${port}/big`));
    console.log(await fetchIn(offline, `http://127.0.0.1:${port}/hello`));
    console.log(await fetchIn(online, `http://127.0.0.1:${port}/hello`, { method: 'POST', body: 'abc' }));
    console.log(seen, logs.filter((l) => /network/.test(l.message)));
  });
});
