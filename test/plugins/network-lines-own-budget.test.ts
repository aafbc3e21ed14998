/**
 * The host's `network: GET … → 200` line is how a person learns what a plugin reached. It shared
 * the guest's log budget: in the worker the call's 1,000 lines and 1 MiB (the first line that did
 * not fit closed the budget for the rest of the call), on the main thread the module's `LogRate`.
 * A guest that first logged 1,000 lines in a call, or used up its module's rate over earlier
 * calls, had its requests go unlogged. Now the host's request lines have a budget and a rate of
 * their own (bounded too: a refused fetch costs the guest only a line), and requests refused
 * before anything left have theirs apart from requests sent, in the worker and on the main thread.
 * A line of a request sent that a rate drops names its host in the rate's notice.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { ModuleRegistry, buildPlugin, type ModuleHandle } from '../../main/plugins/index.js';
import { MAX_NETWORK_LINES_PER_CALL } from '../../main/plugins/limits.js';

const root = mkdtempSync(join(tmpdir(), 'chatty-network-lines-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** An HTTP server answering `ok`, printing its port. */
const SERVER = `require('node:http').createServer((_q, s) => s.end('ok')).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;

/** Logs `lines` lines of `size` characters, fetches `before.url` `before.times` times, then `url` `fetches` times with `method` (one way or the other, every one gets a line). */
const SOURCE = `
export const plugin = {
  metadata() { return { name: 'chatty', version: '0.1.0', description: 'logs then fetches', requestedCapabilities: ['logging'], configKeys: [] }; },
  listTools() { return [{ name: 'go', description: 'Logs, then fetches.', parametersSchema: '{}' }]; },
  async invokeTool(call) {
    const { url, lines, size, fetches, before, method } = JSON.parse(call.argumentsJson);
    const line = 'x'.repeat(size);
    for (let i = 0; i < lines; i++) console.log(line);
    for (let i = 0; i < (before?.times ?? 0); i++) {
      try { await fetch(before.url); } catch {}
    }
    let status = 'none';
    for (let i = 0; i < fetches; i++) {
      try { status = String((await fetch(url, method ? { method } : undefined)).status); } catch { status = 'refused'; }
    }
    return { content: status };
  },
};`;

let server: ChildProcess;
/** The test's HTTP server's port, and one nothing listens on (both allowed to the plugin). */
let port: number;
let closed: number;
const dir = join(root, 'chatty');
before(async () => {
  // In a process of its own: a step keeps this thread busy while the guest's request is answered.
  server = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  port = await new Promise<number>((resolve, reject) => {
    server.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    server.once('exit', (code) => reject(new Error(`the test's server exited (${code})`)));
  });
  closed = await closedPort();
  mkdirSync(join(dir, 'src'), { recursive: true });
  const manifest = `[module]\nname = "chatty"\nversion = "0.1.0"\nwasm = "plugin.wasm"\n\n[protocols]\nmcp = true\n`;
  writeFileSync(join(dir, 'module.toml'), manifest);
  writeFileSync(join(dir, 'src', 'plugin.js'), SOURCE);
  await buildPlugin(dir);
  writeFileSync(join(dir, 'module.toml'), `${manifest}\n[network]\nallow = ["127.0.0.1:${port}", "127.0.0.1:${closed}"]\n`);
});
after(() => server?.kill());

it("the host's request lines are logged whatever the guest logged before them, and bounded themselves", { timeout: 300_000 }, async () => {
  const { logs, registry, handle } = await loaded();
  try {
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
    // On the main thread each kind has a rate of its own too. Sharing one, calls of 1,000 refused
    // requests (short lines) used it up, and the line of the request each then sent (longer: the
    // guest picks its method) was dropped, counted in the rate's notice, whenever the handle read
    // the call's lines in one go: here the main thread is kept busy while the call runs, as a
    // loaded gateway's is. Calls until the rate drops lines, each sent line logged.
    const method = 'M'.repeat(180);
    let drained = false;
    for (let round = 1; round <= 20 && !drained; round++) {
      logs.length = 0;
      const callId = `rate-${round}`;
      const answer = handle.invokeTool({ name: 'go', argumentsJson: JSON.stringify({ url: `http://127.0.0.1:${port}/`, lines: 0, size: 1, fetches: 1, method, before: { url: 'http://b/', times: MAX_NETWORK_LINES_PER_CALL } }), callId });
      busyWhileRunning(handle, callId);
      assert.equal((await answer).ok, true);
      drained = logs.some((l) => /over the module's budget/.test(l));
      // Node's server answers 400 to a method it does not know: the request went out all the same.
      const sent = logs.filter((l) => l.startsWith(`info network: ${method} 127.0.0.1:${port} → 400`)).length;
      assert.equal(sent, 1, `round ${round}: the request sent after ${MAX_NETWORK_LINES_PER_CALL} refused (${logs.filter((l) => !l.includes(' refused: ')).join(' | ')})`);
    }
    assert.ok(drained, 'the refused lines used up their rate');
  } finally {
    await registry.close();
  }
});

it("a request sent whose line the module's rate drops is named in the rate's notice, said within a second", { timeout: 300_000 }, async () => {
  // Requests sent that fail at once (an allowed host refusing connections) are sent lines: a guest
  // failing 999 of them a call used up the rate of sent lines over a few calls, and the line of a
  // request it then sent to another allowed host was dropped, counted and never named; the notice
  // came only at a drop a second after the last, so the last drops of a burst were not even counted.
  const { logs, registry, handle } = await loaded();
  try {
    const method = 'M'.repeat(180); // longer than a failure's line: the guest picks its method
    const named = (): boolean => logs.some((l) => /over the module's budget/.test(l) && l.includes(`127.0.0.1:${port}`));
    let dropped = false;
    for (let round = 1; round <= 20 && !dropped; round++) {
      logs.length = 0;
      const callId = `named-${round}`;
      // 999 failing and the one sent: within the call's 1,000 request lines (the worker's own note names the rest).
      const answer = handle.invokeTool({ name: 'go', argumentsJson: JSON.stringify({ url: `http://127.0.0.1:${port}/`, lines: 0, size: 1, fetches: 1, method, before: { url: `http://127.0.0.1:${closed}/`, times: 999 } }), callId });
      busyWhileRunning(handle, callId);
      assert.equal((await answer).ok, true);
      if (logs.some((l) => l.startsWith(`info network: ${method} 127.0.0.1:${port} → 400`))) continue;
      dropped = true;
      // Its line was dropped: the rate's notice names where it went, at once or once its second has passed.
      const until = performance.now() + 5_000;
      while (!named() && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
      const failures = logs.filter((l) => l.includes(`127.0.0.1:${closed} refused`)).length;
      assert.ok(named(), `round ${round}: the request sent to 127.0.0.1:${port} is neither logged nor named (${failures} failures logged; ${logs.filter((l) => /dropped/.test(l)).join(' | ') || 'no notice'})`);
    }
    assert.ok(dropped, 'the failing requests used up the rate of sent lines');
  } finally {
    await registry.close();
  }
});

/** The plugin loaded by a registry of its own (so with rates of its own), logging to `logs`. */
async function loaded(): Promise<{ logs: string[]; registry: ModuleRegistry; handle: ModuleHandle }> {
  const logs: string[] = [];
  const registry = new ModuleRegistry({ cacheDir: join(root, 'cache'), logger: { log: (level, message) => logs.push(`${level} ${message}`) } });
  await registry.loadModule(dir);
  return { logs, registry, handle: registry.get('chatty')! };
}

/** A port nothing listens on (one just closed). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port: free } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return free;
}

/**
 * Keeps this thread busy until the guest has started and finished the call `callId` (at most
 * 120 s): the worker's lines of it wait, and the handle reads them in one go after.
 */
function busyWhileRunning(handle: ModuleHandle, callId: string): void {
  const until = performance.now() + 120_000;
  while (handle.runningCallId !== callId && performance.now() < until);
  while (handle.runningCallId === callId && performance.now() < until);
}
