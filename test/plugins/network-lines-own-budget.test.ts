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

/** Logs `lines` lines of `size` characters, then fetches `url` `fetches` times (one way or the other, every one gets a line). */
const SOURCE = `
export const plugin = {
  metadata() { return { name: 'chatty', version: '0.1.0', description: 'logs then fetches', requestedCapabilities: ['logging'], configKeys: [] }; },
  listTools() { return [{ name: 'go', description: 'Logs, then fetches.', parametersSchema: '{}' }]; },
  async invokeTool(call) {
    const { url, lines, size, fetches } = JSON.parse(call.argumentsJson);
    const line = 'x'.repeat(size);
    for (let i = 0; i < lines; i++) console.log(line);
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
    const call = async (args: { lines: number; size: number; fetches: number; url?: string }): Promise<string[]> => {
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
    // A line over a line's cap (a host of a million letters, refused) is cut to it, not dropped whole.
    const long = await call({ lines: 0, size: 1, fetches: 1, url: `http://${'a'.repeat(1_000_000)}.example/` });
    assert.equal(long.length, 1, 'the request to a long host has its line');
    assert.ok(Buffer.byteLength(long[0]!) <= 64 * 1024 + 8, `${Buffer.byteLength(long[0]!)} bytes`);
    // Bounded themselves: a loop of refused requests gets the call's budget of lines and a note.
    const refused = await call({ lines: 0, size: 1, fetches: MAX_NETWORK_LINES_PER_CALL + 500, url: 'http://elsewhere.example/' });
    assert.equal(refused.length, MAX_NETWORK_LINES_PER_CALL);
    assert.ok(logs.some((l) => /dropped 500 network line\(s\)/.test(l)), logs.filter((l) => !l.includes('network: GET')).join('\n'));
  } finally {
    await registry.close();
    server.close();
  }
});
