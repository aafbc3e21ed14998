import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openModules, type ModuleEvent } from '../../main/compose/modules.js';
import { startGateway, tempDir } from '../helpers/gateway.js';
import { exited, firstLine, spawnCli, watchOutput } from '../helpers/cli.js';
import { unixRequest } from '../helpers/http.js';
import { buildFixture, TEST_CACHE_DIR, writeModuleDir } from '../helpers/wasm-fixtures.js';

const scratch = tempDir('chatty-first-run-');
after(() => scratch.remove());

const STREAMABLE = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
const toolsList = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

interface IndexEntry {
  name: string;
  state?: string;
  reason?: string;
  surfaces?: string[];
}

/** A gate a build waits on: the test opens it when it has seen the building state. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

describe('a first run: the bundled examples are built behind the ready line', () => {
  let component: Uint8Array;
  const source = join(scratch.path, 'examples');
  before(async () => {
    component = await buildFixture('echo');
    // Example sources: the build (below) writes the component, as componentize-js would.
    writeModuleDir(source, 'echo');
    writeModuleDir(source, 'broken');
  });

  test('a module is listed as building and answers 503 with Retry-After until built, then is served; a failed build is listed with its reason', async () => {
    const echoBuilt = gate();
    const events: ModuleEvent[] = [];
    const eventSeen = new Map<string, () => void>();
    const heard = (name: string): Promise<void> => new Promise((resolve) => eventSeen.set(name, resolve));
    const brokenHeard = heard('broken');
    const echoHeard = heard('echo');
    const opened = await openModules(undefined, {
      registry: { cacheDir: TEST_CACHE_DIR, logger: { log: () => {} } },
      examples: {
        source,
        cacheDir: join(scratch.path, 'built'),
        build: async (dir) => {
          if (dir.includes('broken')) throw new Error('componentize-js: SyntaxError in src/plugin.js');
          await echoBuilt.wait;
          writeFileSync(join(dir, 'plugin.wasm'), component);
        },
      },
      background: {
        onModule: (event) => {
          events.push(event);
          eventSeen.get(event.name)?.();
        },
      },
    });
    const gw = await startGateway(opened.registry);
    try {
      await brokenHeard;
      const index = async (): Promise<IndexEntry[]> => (JSON.parse((await unixRequest(gw.socketPath, { path: '/', headers: gw.auth })).body) as { modules: IndexEntry[] }).modules;
      assert.deepEqual(await index(), [
        { name: 'broken', state: 'failed', reason: 'componentize-js: SyntaxError in src/plugin.js' },
        { name: 'echo', state: 'building' },
      ]);
      const waiting = await unixRequest(gw.socketPath, { method: 'POST', path: '/mcp/echo', headers: { ...gw.auth, ...STREAMABLE }, body: toolsList });
      assert.equal(waiting.status, 503);
      assert.equal(waiting.headers['retry-after'], '5');
      assert.match(waiting.body, /Module 'echo' is being built/);
      const sse = await unixRequest(gw.socketPath, { path: '/mcp/echo/sse', headers: { ...gw.auth, accept: 'text/event-stream' } });
      assert.equal(sse.status, 503);
      assert.equal(sse.headers['retry-after'], '5');
      const failed = await unixRequest(gw.socketPath, { method: 'POST', path: '/mcp/broken', headers: { ...gw.auth, ...STREAMABLE }, body: toolsList });
      assert.equal(failed.status, 503);
      assert.equal(failed.headers['retry-after'], undefined);
      assert.match(failed.body, /Module 'broken' failed to build: componentize-js: SyntaxError/);

      echoBuilt.open();
      await echoHeard;
      await opened.built;
      assert.deepEqual(events, [
        { name: 'broken', state: 'failed', reason: 'componentize-js: SyntaxError in src/plugin.js' },
        { name: 'echo', state: 'served' },
      ]);
      const served = await unixRequest(gw.socketPath, { method: 'POST', path: '/mcp/echo', headers: { ...gw.auth, ...STREAMABLE }, body: toolsList });
      assert.equal(served.status, 200);
      assert.match(served.body, /"tools"/);
      const after = await index();
      assert.deepEqual(after.find((m) => m.name === 'echo')?.surfaces, ['/mcp/echo', '/mcp/echo/sse']);
      assert.equal(after.find((m) => m.name === 'echo')?.state, undefined);
    } finally {
      await gw.close();
      await opened.registry.close();
    }
  });

  test('an example already built is served before openModules resolves, with nothing left building', async () => {
    const cacheDir = join(scratch.path, 'built-twice');
    const build = async (dir: string): Promise<void> => writeFileSync(join(dir, 'plugin.wasm'), component);
    const examples = { source: join(scratch.path, 'examples-echo'), cacheDir, build };
    writeModuleDir(examples.source, 'echo');
    const first = await openModules(undefined, { registry: { cacheDir: TEST_CACHE_DIR, logger: { log: () => {} } }, examples, background: {} });
    await first.built;
    await first.registry.close();
    const again = await openModules(undefined, { registry: { cacheDir: TEST_CACHE_DIR, logger: { log: () => {} } }, examples: { ...examples, build: () => Promise.reject(new Error('rebuilt')) }, background: {} });
    try {
      assert.deepEqual(again.registry.list().map((m) => m.name), ['echo']);
      assert.deepEqual(again.registry.pending(), []);
    } finally {
      await again.registry.close();
    }
  });
});

describe('chatty-gateway serve on a first run (real bin, empty build cache)', () => {
  test('--json: the ready line comes first, while the examples build; GET / lists them as building and their routes answer 503 with Retry-After; a signal still stops at once', async () => {
    const cache = join(scratch.path, 'xdg-cache');
    const runtimeDir = join(scratch.path, 'run');
    const child = spawnCli(['serve', '--json', '--no-bundled-agents', '--runtime-dir', runtimeDir], { ...process.env, XDG_CACHE_HOME: cache });
    const ended = exited(child);
    const stderr = watchOutput(child, child.stderr, ended);
    const ready = JSON.parse(await firstLine(child)) as { event: string; socket: string; token: string };
    assert.equal(ready.event, 'ready');
    const auth = { authorization: `Bearer ${readFileSync(ready.token, 'utf8')}` };
    const index = JSON.parse((await unixRequest(ready.socket, { path: '/', headers: auth })).body) as { modules: IndexEntry[] };
    // The first example is being built (or the second, if the first was quick): none is served yet by the time we ask, at the least one is building.
    const building = index.modules.filter((m) => m.state === 'building').map((m) => m.name);
    assert.ok(building.includes('text-tools'), `text-tools is listed as building: ${JSON.stringify(index.modules)}`);
    const res = await unixRequest(ready.socket, { method: 'POST', path: '/mcp/text-tools', headers: { ...auth, ...STREAMABLE }, body: toolsList });
    assert.equal(res.status, 503);
    assert.equal(res.headers['retry-after'], '5');
    await stderr.until(() => /building example plugin/.test(stderr.text()), 'the build line');
    child.kill('SIGTERM');
    assert.deepEqual(await ended, { code: 0, signal: null });
    assert.ok(!existsSync(ready.socket));
  });
});

/** The processes below `root` (children, theirs, …), from `ps`: pid and command line. */
function descendants(root: number): { pid: number; args: string }[] {
  const rows = spawnSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' }).stdout.split('\n');
  const table = rows.map((row) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(row)).filter((m) => m !== null).map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3]! }));
  const found: { pid: number; args: string }[] = [];
  const parents = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of table) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid);
        found.push({ pid: p.pid, args: p.args });
        grew = true;
      }
    }
  }
  return found;
}

/** Running (a zombie waiting to be reaped is not). */
function alive(pid: number): boolean {
  const state = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).stdout.trim();
  return state !== '' && !state.startsWith('Z');
}

/** Those of `processes` still running once the kernel had `ms` to finish tearing them down (a SIGKILLed process is not gone at once). */
async function stillRunning<T extends { pid: number }>(processes: readonly T[], ms: number): Promise<T[]> {
  const until = performance.now() + ms;
  let left = processes.filter((p) => alive(p.pid));
  while (left.length > 0 && performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50)); // polling ps: no event tells when another's child is gone
    left = left.filter((p) => alive(p.pid));
  }
  return left;
}

describe("serve's background builds run in a child process (real bin, real componentize-js)", () => {
  test('the gateway answers GET / while wizer runs an example build; a signal then stops the build with it, leaving no process behind', { timeout: 180_000 }, async () => {
    const cache = join(scratch.path, 'xdg-cache-background');
    const child = spawnCli(['serve', '--json', '--no-bundled-agents', '--runtime-dir', join(scratch.path, 'run-background')], { ...process.env, XDG_CACHE_HOME: cache });
    const ended = exited(child);
    const stderr = watchOutput(child, child.stderr, ended);
    try {
      const ready = JSON.parse(await firstLine(child)) as { socket: string; token: string };
      const auth = { authorization: `Bearer ${readFileSync(ready.token, 'utf8')}` };
      // componentize-js runs wizer with spawnSync: in serve's own thread nothing would answer until it ends.
      let wizer: { pid: number; args: string } | undefined;
      while (!(wizer = descendants(child.pid!).find((p) => /\bwizer\b/.test(p.args) && !p.args.includes('build-process-entry')))) {
        assert.ok(!/is built and served/.test(stderr.text()), `an example was built before wizer was seen running: ${stderr.text()}`);
        await new Promise((resolve) => setTimeout(resolve, 50)); // polling ps: no event tells when wizer starts
      }
      const builds = descendants(child.pid!);
      const asked = performance.now();
      const index = await Promise.race([
        unixRequest(ready.socket, { path: '/', headers: auth }),
        // A hang guard, not a speed check: a gateway frozen by an in-process build answers only
        // when wizer is done (48 s seen), which this and the alive(wizer) check below both catch.
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('GET / did not answer within 10 s while wizer ran: the gateway is frozen')), 10_000).unref()),
      ]);
      const answeredMs = performance.now() - asked;
      assert.equal(index.status, 200);
      assert.ok(alive(wizer.pid), 'wizer was still running when GET / was answered');
      console.log(`# GET / answered in ${answeredMs.toFixed(1)} ms while wizer ran`);

      child.kill('SIGTERM');
      assert.deepEqual(await ended, { code: 0, signal: null });
      // Left running, the build goes on 20-70 s: 15 s tells it apart and gives a loaded machine time to reap.
      assert.deepEqual(await stillRunning(builds, 15_000), [], 'the build and its wizer were stopped with serve');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
