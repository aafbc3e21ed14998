/**
 * The host's `network: GET … → 200` line is how a person learns what a plugin reached. It shared
 * the guest's log budget: in the worker the call's 1,000 lines and 1 MiB (the first line that did
 * not fit closed the budget for the rest of the call), on the main thread the module's `LogRate`.
 * A guest that first logged 1,000 lines in a call, or used up its module's rate over earlier
 * calls, had its requests go unlogged. Now the host's request lines have a budget and a rate of
 * their own (bounded too: a refused fetch costs the guest only a line).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ModuleRegistry, buildPlugin } from '../../main/plugins/index.js';
import { MAX_NETWORK_LINES_PER_CALL } from '../../main/plugins/limits.js';

const root = mkdtempSync(join(tmpdir(), 'chatty-network-lines-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Logs `lines` lines of `size` characters, fetches `before.url` `before.times` times, then `url` `fetches` times (one way or the other, every one gets a line). */
const SOURCE = `
export const plugin = {
  metadata() { return { name: 'chatty', version: '0.1.0', description: 'logs then fetches', requestedCapabilities: ['logging'], configKeys: [] }; },
  listTools() { return [{ name: 'go', description: 'Logs, then fetches.', parametersSchema: '{}' }]; },
  async invokeTool(call) {
    const { url, lines, size, fetches, before } = JSON.parse(call.argumentsJson);
    const line = 'x'.repeat(size);
    for (let i = 0; i < lines; i++) console.log(line);
    for (let i = 0; i < (before?.times ?? 0); i++) {
      try { await fetch(before.url); } catch {}
    }
    let status = 'none';
    for (let i = 0; i < fetches; i++) {
      try { status = String((await fetch(url)).status); } catch { status = 'refused'; }
    }
    return { content: status };
  },
};`;

it("the host's request lines are logged whatever the guest logged before them, and bounded themselves", { timeout: 180_000 }, async () => {
  const server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const dir = join(root, 'chatty');
  mkdirSync(join(dir, 'src'), { recursive: true });
  const manifest = `[module]\nname = "chatty"\nversion = "0.1.0"\nwasm = "plugin.wasm"\n\n[protocols]\nmcp = true\n`;
  writeFileSync(join(dir, 'module.toml'), manifest);
  writeFileSync(join(dir, 'src', 'plugin.js'), SOURCE);
  await buildPlugin(dir);
  writeFileSync(join(dir, 'module.toml'), `${manifest}\n[network]\nallow = ["127.0.0.1:${port}"]\n`);
  const logs: string[] = [];
  const registry = new ModuleRegistry({ cacheDir: join(root, 'cache'), logger: { log: (level, message) => logs.push(`${level} ${message}`) } });
  try {
    await registry.loadModule(dir);
    const handle = registry.get('chatty')!;
    const call = async (args: { lines: number; size: number; fetches: number; url?: string; before?: { url: string; times: number } }): Promise<string[]> => {
      logs.length = 0;
      const out = await handle.invokeTool({ name: 'go', argumentsJson: JSON.stringify({ url: `http://127.0.0.1:${port}/`, ...args }), callId: `c${Math.random()}` });
      assert.equal(out.ok, true);
      return logs.filter((l) => l.includes('network: GET'));
    };
    assert.equal((await call({ lines: 0, size: 1, fetches: 1 })).length, 1, 'a request alone');
    // The call's own budget: 1,000 guest lines first.
    assert.equal((await call({ lines: 1000, size: 1, fetches: 1 })).length, 1, 'a request after 1,000 guest lines');
    // The module's rate: two calls of 1,000 lines of 1,000 bytes use up its burst, then a request.
    await call({ lines: 1000, size: 1000, fetches: 0 });
    await call({ lines: 1000, size: 1000, fetches: 0 });
    assert.equal((await call({ lines: 0, size: 1, fetches: 1 })).length, 1, "a request after the guest used up its module's rate");
    // A host of a million letters (refused) is clipped in its line, which still says where and how it ended.
    const longHost = `http://${'a'.repeat(1_000_000)}.example/`;
    const long = await call({ lines: 0, size: 1, fetches: 1, url: longHost });
    assert.equal(long.length, 1, 'the request to a long host has its line');
    assert.ok(Buffer.byteLength(long[0]!) <= 1024, `${Buffer.byteLength(long[0]!)} bytes`);
    assert.match(long[0]!, /^warn network: GET a{200}… \(1000011 characters\) refused: /);
    // Refused requests have a budget apart from those sent: four to such hosts (whose lines, cut at
    // 64 KiB, filled the call's 256 KiB), or 1,000 refused (below), left the request sent after them unlogged.
    const sentLine = (lines: string[]): number => lines.filter((l) => l.startsWith(`info network: GET 127.0.0.1:${port} → 200`)).length;
    assert.equal(sentLine(await call({ lines: 0, size: 1, fetches: 1, before: { url: longHost, times: 4 } })), 1, 'a request sent after four refused to long hosts');
    // Bounded themselves: a loop of refused requests gets the call's budget of lines and a note, and
    // the request sent after them its line all the same.
    const refused = await call({ lines: 0, size: 1, fetches: 1, before: { url: 'http://elsewhere.example/', times: MAX_NETWORK_LINES_PER_CALL + 500 } });
    assert.equal(refused.filter((l) => l.includes('elsewhere.example')).length, MAX_NETWORK_LINES_PER_CALL);
    assert.equal(sentLine(refused), 1, 'a request sent after 1,500 refused');
    assert.ok(logs.some((l) => /dropped 500 network line\(s\) of requests refused/.test(l)), logs.filter((l) => !l.includes('network: GET')).join('\n'));
  } finally {
    await registry.close();
    server.close();
  }
});
