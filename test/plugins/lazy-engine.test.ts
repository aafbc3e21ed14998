import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ENGINE_START_LIMIT, enginesStarting } from '../../main/plugins/handle/engine-starts.js';
import { ModuleRegistry, type ModuleHandle, type ToolOutcome } from '../../main/plugins/index.js';
import { connectClient } from '../mcp/helpers.js';
import { startGateway, tempDir, type RunningGateway } from '../helpers/gateway.js';
import { unixRequest } from '../helpers/http.js';
import { buildFixture, fixtureManifest, loadFixtures, writeModuleDir, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

/**
 * A plugin's engine (its worker thread) starts on its first call and stops when idle; listing
 * its tools starts nothing. Each test says what it waits for (`until`), never how long.
 */

const echoed = (text: string): ToolOutcome => ({ ok: true, value: { content: JSON.stringify(text), usage: undefined } });
const call = (handle: ModuleHandle, name: string, argumentsJson: string) => handle.invokeTool({ name, argumentsJson, callId: name });

/** Resolves once `condition` holds (checked every turn of the event loop); fails after 60 s (a hang guard, not a speed check: a loaded machine may be slow). */
async function until(condition: () => boolean, what: string): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > 60_000) assert.fail(`still waiting for: ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('the lazy engine: listing starts nothing', () => {
  let fx: LoadedFixtures;
  const echo = (): ModuleHandle => fx.registry.get('echo')!;

  before(async () => {
    fx = await loadFixtures([{ name: 'echo', kind: 'echo' }]);
    assert.deepEqual(fx.report.failed, []);
  });
  after(() => fx.close());

  it('a loaded plugin has no engine until it is called', async () => {
    // A load in a fresh transpile cache (each test process has its own) starts the engine once
    // to list the tools and records them, then stops it: it may still be stopping here, never running.
    assert.notEqual(echo().engineState, 'running');
    await until(() => echo().engineState === 'stopped', "the load's own engine to stop");
    const starts = echo().stats.engineStarts;
    await fx.registry.get('echo')!.listTools();
    assert.equal(echo().engineState, 'stopped');
    assert.equal(echo().stats.engineStarts, starts);
  });

  it("tools/list over MCP and the gateway's GET / do not start the engine", async () => {
    const starts = echo().stats.engineStarts;
    const gw = await startGateway(fx.registry);
    try {
      const index = await unixRequest(gw.socketPath, { headers: gw.auth });
      assert.equal(index.status, 200);
      assert.match(index.body, /echo/);
      const { client, close } = await connectClient(gw, 'echo', 'streamable');
      try {
        const { tools } = await client.listTools();
        assert.ok(tools.some((t) => t.name === 'echo'), JSON.stringify(tools));
      } finally {
        await close();
      }
    } finally {
      await gw.close();
    }
    assert.equal(echo().engineState, 'stopped');
    assert.equal(echo().stats.engineStarts, starts, 'no worker thread was started');
  });

  it('the first call starts the engine and succeeds', async () => {
    const starts = echo().stats.engineStarts;
    assert.deepEqual(await call(echo(), 'echo', '"first"'), echoed('first'));
    assert.equal(echo().engineState, 'running');
    assert.equal(echo().stats.engineStarts, starts + 1);
    assert.equal(echo().stats.restarts, 0, 'a start after an idle stop is not a restart');
  });
});

describe('the lazy engine: the load records the tools', () => {
  it('a first load starts the engine to list and record the tools and stops it; a second load (a new registry) starts nothing', async () => {
    const cache = tempDir('chatty-lazy-cache-');
    const modules = tempDir('chatty-lazy-modules-');
    const registries: ModuleRegistry[] = [];
    try {
      writeModuleDir(modules.path, 'rec', { manifest: fixtureManifest('rec'), component: await buildFixture('echo') });
      const load = async (): Promise<ModuleHandle> => {
        const registry = new ModuleRegistry({ cacheDir: cache.path, logger: { log() {} } });
        registries.push(registry);
        const report = await registry.scanDirectory(modules.path);
        assert.deepEqual(report.failed, []);
        return registry.get('rec')!;
      };
      const first = await load();
      assert.equal(first.stats.engineStarts, 1, 'the first load proved the component instantiates');
      assert.equal(first.stats.idleStops, 1, 'and stopped the engine once the tools were recorded');
      const second = await load();
      assert.equal(second.stats.engineStarts, 0, 'the record for these bytes in this context was enough');
      assert.equal(second.engineState, 'stopped');
      assert.deepEqual(await second.listTools(), await first.listTools());
      assert.equal(second.stats.engineStarts, 0);
      assert.deepEqual(await call(second, 'echo', '"recorded"'), echoed('recorded'));
    } finally {
      for (const r of registries) await r.close();
      cache.remove();
      modules.remove();
    }
  });

  it('a record that is not what a load writes (a hand-edited file, a bad schema) counts as none: the load lists the tools again', async () => {
    const cache = tempDir('chatty-lazy-cache-');
    const modules = tempDir('chatty-lazy-modules-');
    const registries: ModuleRegistry[] = [];
    try {
      writeModuleDir(modules.path, 'bad', { manifest: fixtureManifest('bad'), component: await buildFixture('echo') });
      const load = async (): Promise<ModuleHandle> => {
        const registry = new ModuleRegistry({ cacheDir: cache.path, logger: { log() {} } });
        registries.push(registry);
        assert.deepEqual((await registry.scanDirectory(modules.path)).failed, []);
        return registry.get('bad')!;
      };
      const tools = await (await load()).listTools();
      const [entry] = readdirSync(join(cache.path, 'transpiled'));
      const [record] = readdirSync(join(cache.path, 'transpiled', entry!)).filter((f) => /^tools-[0-9a-f]+\.json$/.test(f));
      assert.ok(record, 'the first load wrote a record');
      const path = join(cache.path, 'transpiled', entry!, record);
      const written = JSON.parse(readFileSync(path, 'utf8')) as { tools: { parametersSchema: string }[] };
      for (const forged of [
        'not json',
        JSON.stringify({ ...written, extra: 1 }),
        JSON.stringify({ ...written, tools: written.tools.map((t) => ({ ...t, parametersSchema: '{"type":"string"}' })) }),
      ]) {
        writeFileSync(path, forged);
        const again = await load();
        assert.equal(again.stats.engineStarts, 1, `started again for ${forged.slice(0, 40)}`);
        assert.deepEqual(await again.listTools(), tools);
      }
    } finally {
      for (const r of registries) await r.close();
      cache.remove();
      modules.remove();
    }
  });

  it('a record that lies (a tool the component does not have) is served until a reload, which lists the tools again; a call to the missing tool fails as for any unknown tool', async () => {
    const cache = tempDir('chatty-lazy-cache-');
    const modules = tempDir('chatty-lazy-modules-');
    const registries: ModuleRegistry[] = [];
    try {
      writeModuleDir(modules.path, 'liar', { manifest: fixtureManifest('liar'), component: await buildFixture('echo') });
      const load = async (): Promise<ModuleRegistry> => {
        const registry = new ModuleRegistry({ cacheDir: cache.path, logger: { log() {} } });
        registries.push(registry);
        assert.deepEqual((await registry.scanDirectory(modules.path)).failed, []);
        return registry;
      };
      const tools = await (await load()).get('liar')!.listTools();
      const [entry] = readdirSync(join(cache.path, 'transpiled'));
      const [record] = readdirSync(join(cache.path, 'transpiled', entry!)).filter((f) => /^tools-[0-9a-f]+\.json$/.test(f));
      const path = join(cache.path, 'transpiled', entry!, record!);
      const written = JSON.parse(readFileSync(path, 'utf8')) as { tools: object[] };
      writeFileSync(path, JSON.stringify({ ...written, tools: [...written.tools, { name: 'ghost', description: 'Not there.', parametersSchema: '{}' }] }));
      const registry = await load();
      assert.ok((await registry.get('liar')!.listTools()).some((t) => t.name === 'ghost'), 'the record is what a load writes: it is believed');
      const ghost = await call(registry.get('liar')!, 'ghost', '"x"');
      assert.equal(ghost.ok, false, `a call to a tool the component does not have is its tool-error: ${JSON.stringify(ghost)}`);
      await registry.reload('liar');
      const reloaded = registry.get('liar')!;
      assert.equal(reloaded.stats.engineStarts, 1, 'a reload lists the tools again, record or not');
      assert.deepEqual(await reloaded.listTools(), tools);
      assert.ok(!readFileSync(path, 'utf8').includes('ghost'), 'and records what it found');
    } finally {
      for (const r of registries) await r.close();
      cache.remove();
      modules.remove();
    }
  });

  it('a record made with another config is not used', async () => {
    const cache = tempDir('chatty-lazy-cache-');
    const modules = tempDir('chatty-lazy-modules-');
    const registries: ModuleRegistry[] = [];
    try {
      const component = await buildFixture('echo');
      const load = async (config: string): Promise<ModuleHandle> => {
        writeModuleDir(modules.path, 'cfg', { manifest: fixtureManifest('cfg', `[config]\nkey = "${config}"\n`), component });
        const registry = new ModuleRegistry({ cacheDir: cache.path, logger: { log() {} } });
        registries.push(registry);
        assert.deepEqual((await registry.scanDirectory(modules.path)).failed, []);
        return registry.get('cfg')!;
      };
      assert.equal((await load('a')).stats.engineStarts, 1);
      assert.equal((await load('b')).stats.engineStarts, 1, 'a new context: listed again');
      assert.equal((await load('a')).stats.engineStarts, 0);
    } finally {
      for (const r of registries) await r.close();
      cache.remove();
      modules.remove();
    }
  });
});

describe('the lazy engine: starting and stopping around calls', () => {
  let fx: LoadedFixtures;
  const logs: string[] = [];
  /** Runs once, from inside race's idle stop (the logger is called in the same turn as the stop). */
  let onStop: (() => void) | undefined;
  const get = (name: string): ModuleHandle => fx.registry.get(name)!;

  before(async () => {
    fx = await loadFixtures(
      [
        { name: 'echo', kind: 'echo' },
        { name: 'many', kind: 'echo' },
        { name: 'slow', kind: 'slow' },
        { name: 'race', kind: 'echo' },
      ],
      {
        engineIdleMs: 30,
        logger: {
          log(_level, message, fields) {
            logs.push(message);
            if (/engine stopped after/.test(message) && fields?.['module'] === 'race' && onStop) {
              const run = onStop;
              onStop = undefined;
              run();
            }
          },
        },
      },
    );
    assert.deepEqual(fx.report.failed, []);
  });
  after(() => fx.close());

  it('an idle engine is stopped, and the next call starts it again and succeeds', async () => {
    const echo = get('echo');
    assert.deepEqual(await call(echo, 'echo', '"one"'), echoed('one'));
    const stops = echo.stats.idleStops;
    await until(() => echo.engineState === 'stopped', 'the idle stop');
    assert.equal(echo.stats.idleStops, stops + 1);
    assert.ok(logs.some((l) => /engine stopped after 30 ms idle/.test(l)), logs.join('\n'));
    const starts = echo.stats.engineStarts;
    assert.deepEqual(await call(echo, 'echo', '"two"'), echoed('two'));
    assert.equal(echo.stats.engineStarts, starts + 1);
    assert.equal(echo.stats.restarts, 0);
  });

  it('a call that arrives while the engine starts waits for it and succeeds', async () => {
    const echo = get('echo');
    await until(() => echo.engineState === 'stopped', 'the idle stop');
    const starts = echo.stats.engineStarts;
    const first = call(echo, 'echo', '"a"');
    await until(() => echo.engineState === 'starting', 'the start');
    const second = call(echo, 'echo', '"b"');
    assert.equal(echo.engineState, 'starting');
    assert.deepEqual(await Promise.all([first, second]), [echoed('a'), echoed('b')]);
    assert.equal(echo.stats.engineStarts, starts + 1);
  });

  it('many calls arriving at once start the engine once', async () => {
    const many = get('many');
    await until(() => many.engineState === 'stopped', 'the idle stop');
    const starts = many.stats.engineStarts;
    const texts = Array.from({ length: 24 }, (_, i) => `m${i}`);
    const outcomes = await Promise.all(texts.map((t) => call(many, 'echo', JSON.stringify(t))));
    assert.deepEqual(outcomes, texts.map(echoed));
    assert.equal(many.stats.engineStarts, starts + 1);
  });

  it('a call running longer than the idle time is never cut; the idle time counts from its end', async () => {
    const slow = get('slow');
    const stops = slow.stats.idleStops;
    // 300 ms of guest work, ten idle periods, with a call queued behind it.
    const [long, next] = await Promise.all([call(slow, 'slow', '300'), call(slow, 'echo', '"after"')]);
    assert.equal(long.ok, true, JSON.stringify(long));
    assert.deepEqual(next, echoed('after'));
    assert.equal(slow.engineState, 'running', 'the idle clock starts when the last call ends');
    assert.equal(slow.stats.idleStops, stops);
    assert.equal(slow.stats.timeouts + slow.stats.restarts, 0);
  });

  it('a call that arrives as the engine stops waits for the stop, then starts a fresh engine and succeeds', async () => {
    const race = get('race');
    assert.deepEqual(await call(race, 'echo', '"warm"'), echoed('warm'));
    const starts = race.stats.engineStarts;
    const during = new Promise<{ state: string; outcome: Promise<ToolOutcome> }>((resolve) => {
      onStop = () => resolve({ state: race.engineState, outcome: call(race, 'echo', '"racing"') });
    });
    const { state, outcome } = await during;
    assert.equal(state, 'stopping');
    assert.deepEqual(await outcome, echoed('racing'));
    assert.equal(race.stats.engineStarts, starts + 1);
  });
});

describe('the lazy engine: engines start a few at a time', () => {
  it(`eight stopped plugins called at once all answer, with never more than ${ENGINE_START_LIMIT} engines starting together`, async () => {
    const names = Array.from({ length: 8 }, (_, i) => `w${i}`);
    const fx = await loadFixtures(names.map((name) => ({ name, kind: 'echo' as const })));
    try {
      assert.deepEqual(fx.report.failed, []);
      const handles = names.map((n) => fx.registry.get(n)!);
      // A load that found no record of these bytes listed the tools with its engine: those engines stop first.
      await until(() => handles.every((h) => h.engineState === 'stopped'), "the loads' own engines to stop");
      let most = 0;
      let done = false;
      const all = Promise.all(handles.map((h, i) => call(h, 'echo', JSON.stringify(`w${i}`)))).finally(() => (done = true));
      while (!done) {
        most = Math.max(most, enginesStarting());
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.deepEqual(await all, names.map(echoed));
      assert.ok(most >= 1 && most <= ENGINE_START_LIMIT, `at most ${most} engines started together`);
      assert.equal(enginesStarting(), 0);
    } finally {
      await fx.close();
    }
  });
});

describe('the lazy engine: engineIdleMs 0 keeps it resident', () => {
  it('the load starts the engine and it stays', async () => {
    const fx = await loadFixtures([{ name: 'resident', kind: 'echo' }], { engineIdleMs: 0 });
    try {
      const handle = fx.registry.get('resident')!;
      assert.equal(handle.engineState, 'running');
      assert.deepEqual(await call(handle, 'echo', '"r"'), echoed('r'));
      assert.equal(handle.stats.engineStarts, 1);
      assert.equal(handle.stats.idleStops, 0);
    } finally {
      await fx.close();
    }
  });

  it('a bad engineIdleMs is refused when the registry is made', () => {
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 31]) {
      assert.throws(() => new ModuleRegistry({ engineIdleMs: bad }), /engineIdleMs must be a whole number of milliseconds/);
    }
  });
});

/** `GET /` lists every plugin from its manifest: asking it, however often, starts no engine (issue 21 item 1). */
const INDEX_NAMES = ['idle-a', 'idle-b', 'idle-c', 'idle-d', 'idle-e'];

describe("the lazy engine: the gateway's GET / with idle plugins", () => {
  let fx: LoadedFixtures;
  let gw: RunningGateway;
  const handles = (): ModuleHandle[] => INDEX_NAMES.map((n) => fx.registry.get(n)!);

  before(async () => {
    fx = await loadFixtures(INDEX_NAMES.map((name) => ({ name, kind: 'echo' as const })));
    assert.deepEqual(fx.report.failed, []);
    gw = await startGateway(fx.registry);
    // A load that had no record listed the tools with the engine and is stopping it: wait for that.
    await until(() => handles().every((h) => h.engineState === 'stopped'), 'every engine stopped after the load');
  });
  after(async () => {
    await gw.close();
    await fx.close();
  });

  it(`lists all ${INDEX_NAMES.length} plugins, asked three times, and starts none of their engines`, async () => {
    const starts = handles().map((h) => h.stats.engineStarts);
    for (let i = 0; i < 3; i++) {
      const index = await unixRequest(gw.socketPath, { headers: gw.auth });
      assert.equal(index.status, 200);
      const body = JSON.parse(index.body) as { modules: { name: string; surfaces: string[] }[] };
      assert.deepEqual(body.modules.map((m) => m.name), INDEX_NAMES);
      assert.deepEqual(body.modules[0]!.surfaces, ['/mcp/idle-a', '/mcp/idle-a/sse']);
    }
    assert.deepEqual(handles().map((h) => h.engineState), INDEX_NAMES.map(() => 'stopped'));
    assert.deepEqual(handles().map((h) => h.stats.engineStarts), starts, 'no worker thread was started');
  });

  it('a call to one of them starts that engine alone (the counts above do see a start)', async () => {
    const [first, ...rest] = handles();
    const starts = handles().map((h) => h.stats.engineStarts);
    const outcome = await first!.invokeTool({ name: 'echo', argumentsJson: '"x"', callId: 'c1' });
    assert.equal(outcome.ok, true, JSON.stringify(outcome));
    assert.equal(first!.engineState, 'running');
    assert.equal(first!.stats.engineStarts, starts[0]! + 1);
    assert.deepEqual(rest.map((h) => h.stats.engineStarts), starts.slice(1));
    const index = await unixRequest(gw.socketPath, { headers: gw.auth });
    assert.equal(index.status, 200);
    assert.deepEqual(rest.map((h) => h.engineState), rest.map(() => 'stopped'));
  });
});
