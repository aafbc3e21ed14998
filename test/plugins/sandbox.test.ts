/**
 * The sandbox against components built the way an attacker builds them (test/helpers/
 * attack-components.ts, and the edits of the echo fixture below): each describe names the escape
 * it closes. Where an escape could end the whole process, the test runs the real
 * `chatty-gateway serve` in a child and talks to it on its socket.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { PluginCallError, PluginLoadError, ModuleRegistry, type ModuleHandle, type ToolOutcome } from '../../main/plugins/index.js';
import { componentWit, parse, print } from '@bytecodealliance/jco-transpile/wasm-tools';
import { checkComponentNames } from '../../main/plugins/inspect/component-names.js';
import { injectionComponent, manyMemoriesComponent, secondMemoryComponent, standardNamesComponent } from '../helpers/attack-components.js';
import { exited, firstLine, spawnCli } from '../helpers/cli.js';
import { unixRequest } from '../helpers/http.js';
import { rewriteCachedFile } from './cache-entry-edit.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, loadFixtures, writeModuleDir, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

const MIB = 1024 * 1024;
const call = (handle: ModuleHandle, name: string, argumentsJson = '"x"'): Promise<ToolOutcome> =>
  handle.invokeTool({ name, argumentsJson, callId: name });
const failsWith = (kind: string, message?: RegExp) => (err: unknown) => {
  assert.ok(err instanceof PluginCallError, String(err));
  assert.equal(err.kind, kind, err.message);
  if (message) assert.match(err.message, message);
  return true;
};

/** A registry over one module directory written from `component`. */
async function loadOne(name: string, component: Uint8Array, extra = ''): Promise<{ registry: ModuleRegistry; root: string; logs: string[]; load: Promise<unknown> }> {
  const root = mkdtempSync(join(tmpdir(), 'chatty-sandbox-'));
  writeModuleDir(root, name, { manifest: fixtureManifest(name, extra), component });
  const logs: string[] = [];
  const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: (level, message) => logs.push(`${level} ${message}`) } });
  return { registry, root, logs, load: registry.loadModule(join(root, name)) };
}

describe('arbitrary JavaScript through a core or component name', () => {
  it('a memory exported as `x\'] ?? (() => {…})(), [\'x` is refused before transpiling, and its payload never runs', async () => {
    const marker = join(mkdtempSync(join(tmpdir(), 'chatty-marker-')), 'pwned');
    process.env['CHATTY_TEST_SECRET'] = 'do-not-leak';
    // Synchronous, so that if it ran at all it ran before the load settled.
    const payload = `process.getBuiltinModule('node:fs').writeFileSync(${JSON.stringify(marker)}, String(process.env.CHATTY_TEST_SECRET))`;
    const { registry, root, load } = await loadOne('inject', await injectionComponent(payload));
    try {
      await assert.rejects(load, (err: unknown) => {
        assert.ok(err instanceof PluginLoadError, String(err));
        assert.match(err.message, /core export name "x'\] \?\? .*outside the allowed set.*refused before transpiling/);
        return true;
      });
      assert.equal(existsSync(marker), false, 'the payload ran');
      assert.equal(registry.get('inject'), undefined);
    } finally {
      delete process.env['CHATTY_TEST_SECRET'];
      await registry.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('the allow-list takes every name real toolchains emit and refuses anything that can leave a string', async () => {
    const good = [
      'memory', 'cabi_realloc', '_start', '0', '$imports', '$root', 'wasi_snapshot_preview1', 'cm32p2_memory',
      'cm32p2|chatty:plugin/plugin@0.3|invoke-tool', 'chatty:plugin/plugin@0.3.0#invoke-tool', '[export]chatty:plugin/plugin@0.3.0',
      '[method]input-stream.blocking-read', '[resource-drop]output-stream', 'wasi:io/streams@0.2.0-rc.1+build.5',
    ];
    const bad = ["x'", 'x"', 'x`', 'x\\', 'a\nb', '${x}', 'a b', 'a(b)', 'a;b', 'é', 'a*/b', 'a=b', 'x'.repeat(1025)];
    const wat = (name: string): string => `(component (core module (memory (export ${JSON.stringify(name)}) 1)))`;
    for (const name of good) checkComponentNames(await parse(wat(name)));
    const bytesOf = new Map<string, Uint8Array>();
    for (const name of bad) bytesOf.set(name, await parse(wat(name)));
    for (const name of bad) assert.throws(() => checkComponentNames(bytesOf.get(name)!), PluginLoadError, `accepted ${JSON.stringify(name)}`);
  });

  it('names are checked in core imports, core instance exports and nested components alike', async () => {
    const evil = "a'b";
    const cases = [
      `(component (core module (import ${JSON.stringify(evil)} "f" (func))))`,
      `(component (core module (import "m" ${JSON.stringify(evil)} (func))))`,
      `(component (core module $m (func (export "f"))) (core instance $i (instantiate $m)) (core instance (export ${JSON.stringify(evil)} (func $i "f"))))`,
      `(component (core module $m (import "x" "f" (func))) (core module $n (func (export "f"))) (core instance $j (instantiate $n)) (core instance (instantiate $m (with "x" (instance $j)))) (core instance $k (instantiate $n)) (alias core export $k "f" (core func)) (core module (import "m" "g" (func))) (component (core module (memory (export ${JSON.stringify(evil)}) 1))))`,
    ];
    for (const text of cases) {
      const bytes = await parse(text);
      assert.throws(() => checkComponentNames(bytes), PluginLoadError, text);
    }
    // The well-formed parts of those components pass on their own.
    checkComponentNames(await parse('(component (core module $m (func (export "f"))) (core instance $i (instantiate $m)) (alias core export $i "f" (core func)))'));
  });

  // The echo fixture printed to text, edited as an attacker edits it, and parsed back.
  const echoEdited = async (edit: (wat: string) => string): Promise<Uint8Array> => parse(edit(await print(await buildFixture('echo'))));
  const echoWith = (wat: string): Promise<Uint8Array> => echoEdited((text) => text.replace(/\n\)\s*$/, `\n${wat}\n)`));
  const evil = JSON.stringify("x'] ?? (() => { globalThis.PWNED = 1 })(), ['x");
  /** Loads `component` with a cache of its own: refused with `where` named, and nothing transpiled. */
  const refusedBeforeTranspiling = async (component: Uint8Array, where: string): Promise<void> => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'chatty-names-cache-'));
    const root = mkdtempSync(join(tmpdir(), 'chatty-names-'));
    const registry = new ModuleRegistry({ cacheDir, logger: { log() {} } });
    try {
      writeModuleDir(root, 'names', { manifest: fixtureManifest('names'), component });
      await assert.rejects(registry.loadModule(join(root, 'names')), (err: unknown) => {
        assert.ok(err instanceof PluginLoadError, String(err));
        assert.match(err.message, new RegExp(`^component: ${where} "x'\\] \\?\\? .*refused before transpiling$`));
        return true;
      });
      assert.equal(existsSync(join(cacheDir, 'transpiled')), false, 'the component was transpiled');
    } finally {
      await registry.close();
      rmSync(cacheDir, { recursive: true, force: true });
      rmSync(root, { recursive: true, force: true });
    }
  };

  it('a bad name as a core or component instantiation argument is refused before transpiling; jco would take either', async () => {
    // An extra argument to the main core instance, and one to an empty nested component: neither
    // is an import, and the component model allows both, so only the name check stands in the way.
    const billing = '(with "chatty:plugin/billing@0.3.0" (instance $chatty:plugin/billing@0.3.0))';
    const coreArgument = await echoEdited((text) => text.replace(billing, `${billing}\n(with ${evil} (instance $chatty:plugin/logging@0.3.0))`));
    const componentArgument = await echoWith(`(component $c)\n(instance (instantiate $c (with ${evil} (instance $chatty:plugin/types@0.3.0))))`);
    for (const component of [coreArgument, componentArgument]) assert.match(await componentWit(component), /export chatty:plugin\/plugin@0\.3\.0;/);
    await refusedBeforeTranspiling(coreArgument, 'a core instantiation argument');
    await refusedBeforeTranspiling(componentArgument, 'an instantiation argument');
  });

  it('a bad name in an alias is refused by the alias check before transpiling (no valid component can put it only there)', async () => {
    // An alias names an export its instance already has, so in a valid component a bad alias name
    // is first met (and refused) where that export is defined. The only places the alias check is
    // alone are components the validator refuses anyway: an imported instance whose type (a type
    // section, which the name walk skips) declares a non-kebab export, and an alias of a core
    // export the instance does not have. Both are refused here, by the alias check, before jco's
    // own validator sees them.
    const exportAlias = await echoWith(`(import "evil:x/y" (instance $ev (export ${evil} (func))))\n(alias export $ev ${evil} (func))`);
    const coreExportAlias = await echoWith(`(alias core export $main ${evil} (core func))`);
    await assert.rejects(componentWit(exportAlias), /is not in kebab case/);
    await assert.rejects(componentWit(coreExportAlias), /has no export named/);
    await refusedBeforeTranspiling(exportAlias, 'an export alias');
    await refusedBeforeTranspiling(coreExportAlias, 'a core export alias');
  });
});

describe('the second layer: jco\'s JavaScript is checked on every load, cached or not', () => {
  it('a transpile cache entry whose JavaScript reaches for `process` is refused before it is imported', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'chatty-poisoned-cache-'));
    const root = mkdtempSync(join(tmpdir(), 'chatty-poisoned-'));
    const marker = join(root, 'ran');
    try {
      writeModuleDir(root, 'echo', { manifest: fixtureManifest('echo'), component: await buildFixture('echo') });
      const first = new ModuleRegistry({ cacheDir, logger: { log() {} } });
      await first.loadModule(join(root, 'echo'));
      await first.close();
      const [entry] = readdirSync(join(cacheDir, 'transpiled'));
      const file = join(cacheDir, 'transpiled', entry!, 'component.mjs');
      // Its meta.json made to match (else the hash check refuses it first): the JavaScript check must still.
      rewriteCachedFile(join(cacheDir, 'transpiled', entry!), 'component.mjs', `process.getBuiltinModule('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x');\n${readFileSync(file, 'utf8')}`);
      const second = new ModuleRegistry({ cacheDir, logger: { log() {} } });
      try {
        await assert.rejects(second.loadModule(join(root, 'echo')), (err: unknown) => err instanceof PluginLoadError && /process/.test(err.message));
        assert.equal(existsSync(marker), false);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the output cap and the log budget, whatever the names and memories', () => {
  it('standard `cm32p2|…` core names get the 1 MiB cap and the per-line log cap', async () => {
    const { registry, root, logs, load } = await loadOne('cm32', await standardNamesComponent());
    try {
      await load;
      const handle = registry.get('cm32')!;
      await assert.rejects(call(handle, 'big'), failsWith('output_too_large', /over the 1048576-byte cap/));
      const line = 'y'.repeat(200 * 1024);
      assert.deepEqual(await call(handle, 'log', JSON.stringify(line)), { ok: true, value: { content: '', usage: undefined } });
      const logged = logs.filter((l) => l.startsWith('info "yyy'));
      assert.equal(logged.length, 1);
      assert.equal(logged[0]!.length, 'info '.length + 64 * 1024);
      assert.deepEqual(await call(handle, 'echo', '"still here"'), { ok: true, value: { content: '"still here"', usage: undefined } });
    } finally {
      await registry.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('an answer lifted from a second core instance\'s own memory is capped at what the lift reads', async () => {
    for (const [bytes, expect] of [[16 * MIB, 'refused'], [MIB, 'served'], [100, 'served']] as const) {
      const { registry, root, load } = await loadOne('second', await secondMemoryComponent(bytes));
      try {
        await load;
        const handle = registry.get('second')!;
        if (expect === 'refused') {
          await assert.rejects(call(handle, 'echo'), failsWith('output_too_large', /invoke-tool output is over the 1048576-byte cap/));
        } else {
          const outcome = await call(handle, 'echo');
          assert.ok(outcome.ok);
          assert.equal(outcome.value.content, 'A'.repeat(bytes));
        }
        assert.equal((await handle.listTools()).length > 0, true, 'the module still answers');
      } finally {
        await registry.close();
        rmSync(root, { recursive: true, force: true });
      }
    }
  });

  it('the log budget counts bytes: 3 MiB of 3-byte characters do not pass a 1 MiB budget', async () => {
    const fx: LoadedFixtures = await loadFixtures([{ name: 'hostile', kind: 'hostile', extra: '[resources]\nmax_memory_mb = 64\n' }]);
    try {
      const handle = fx.registry.get('hostile')!;
      assert.deepEqual(await call(handle, 'log-utf8', '48'), { ok: true, value: { content: '', usage: undefined } });
      const lines = fx.logs.filter((l) => l.level === 'info' && l.message.startsWith('€'));
      const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l.message), 0);
      assert.ok(bytes <= MIB, `${bytes} bytes of log passed`);
      assert.equal(lines.length, 16); // 16 lines of 65535 bytes fit in 1 MiB, the 17th does not
      assert.ok(fx.logs.some((l) => /dropped 32 log line\(s\) over the per-call budget/.test(l.message)));
    } finally {
      await fx.close();
    }
  });
});

describe('max_memory_mb bounds the plugin, not each memory', () => {
  it('64 instances of one core module share the cap: resident memory grows by a fraction of 64 × the cap', async () => {
    const before = process.memoryUsage().rss;
    const { registry, root, load } = await loadOne('cells', await manyMemoriesComponent(64), '[resources]\nmax_memory_mb = 16\n');
    try {
      await load; // the cells' start functions grow and fill their memories during instantiation
      const grown = process.memoryUsage().rss - before;
      // Each memory capped at 16 MiB alone would make this over 1 GiB; shared, the guest holds at
      // most 16 MiB. What remains is the worker thread and jco's bindings.
      assert.ok(grown < 200 * MIB, `resident memory grew by ${(grown / MIB).toFixed(0)} MiB`);
      const handle = registry.get('cells')!;
      assert.deepEqual(await call(handle, 'echo', '"ok"'), { ok: true, value: { content: '"ok"', usage: undefined } });
    } finally {
      await registry.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a component with more memories than max_memory_mb has pages is refused at load', async () => {
    const { registry, root, load } = await loadOne('crowd', await manyMemoriesComponent(40), '[resources]\nmax_memory_mb = 2\n');
    try {
      await assert.rejects(load, /creates 41 linear memories: max_memory_mb = 2 leaves less than a 64 KiB page for each/);
    } finally {
      await registry.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('stdin and tables, through the real `serve` on its socket', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'chatty-sandbox-serve-'));
  let child: ReturnType<typeof spawnCli>;
  let socket = '';
  let token = '';
  const toolCall = async (module: string, name: string, args: object = {}): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await unixRequest(socket, {
      method: 'POST',
      path: `/mcp/${module}`,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });
    return { status: res.status, body: JSON.parse(res.body) as Record<string, unknown> };
  };

  before(async () => {
    const modules = join(scratch, 'modules');
    writeModuleDir(modules, 'echo', { component: await buildFixture('echo') });
    writeModuleDir(modules, 'wasi', { component: await buildFixture('wasi') });
    writeModuleDir(modules, 'tables', { component: await buildFixture('tables') });
    // The run's own cache and config: serve's defaults are the user's ~/.cache and ~/.config, which
    // every run on the machine would share (and write its transpiled fixtures and grants into).
    const env = { ...process.env, XDG_CACHE_HOME: join(scratch, 'cache'), XDG_CONFIG_HOME: join(scratch, 'config') };
    child = spawnCli(['serve', '--json', '--runtime-dir', join(scratch, 'run'), '--modules-dir', modules], env);
    // The gateway's own stdin has something to read: a guest must not see it.
    child.stdin.write('the gateway operator typed this\n');
    const ready = JSON.parse(await firstLine(child)) as { socket: string; token: string };
    socket = ready.socket;
    token = readFileSync(ready.token, 'utf8');
  });
  after(async () => {
    child.kill('SIGTERM');
    await exited(child);
    rmSync(scratch, { recursive: true, force: true });
  });

  it("serve transpiled its modules into the run's own cache, not the user's", () => {
    assert.equal(readdirSync(join(scratch, 'cache', 'chatty-gateway', 'plugins', 'transpiled')).length, 3);
  });

  it('wasi:cli/stdin is at end of file, not the gateway\'s stdin', async () => {
    const res = await toolCall('wasi', 'stdin');
    assert.equal(res.status, 200);
    const result = res.body['result'] as { isError: boolean; content: { text: string }[] };
    assert.equal(result.isError, true);
    assert.match(result.content[0]!.text, /closed/);
    assert.doesNotMatch(JSON.stringify(res.body), /operator typed/);
  });

  it('growing five tables by 10 million entries each fails inside the guest; the gateway and its other modules go on', async () => {
    const res = await toolCall('tables', 'grow-tables');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const result = res.body['result'] as { isError?: boolean; content: { text: string }[] };
    assert.equal(result.content[0]!.text, 'refused');
    const echo = await toolCall('echo', 'echo', { still: 'alive' });
    assert.equal(echo.status, 200);
    assert.equal(child.exitCode, null);
    assert.equal(child.signalCode, null);
  });
});

describe('defence in depth in the module worker', () => {
  it('a function\'s `.constructor` is gone before jco\'s code runs: no way back to Function', async () => {
    // A stand-in for jco's module that tries the reflection route and reports what it found.
    const dir = mkdtempSync(join(tmpdir(), 'chatty-seal-'));
    const probe = join(dir, 'probe.mjs');
    writeFileSync(probe, `const f = () => 0; const g = async () => 0;
      throw new Error(JSON.stringify([typeof f.constructor, typeof g.constructor, typeof (function* () {}).constructor]));`);
    const { spawnWorker } = await import('../../main/plugins/spawn.js');
    const { MessageChannel } = await import('node:worker_threads');
    const { CallChannel } = await import('../../main/plugins/worker/call-channel.js');
    const ports = new MessageChannel();
    const calls = new MessageChannel();
    const worker = spawnWorker('guest-entry', {
      workerData: {
        module: 'probe', componentUrl: pathToFileURL(probe).href, coreModules: {}, wasiImports: [], config: null, filesRoot: null,
        grants: { llm: 'not-granted', billing: 'not-granted' }, maxOutputBytes: 1024, maxMemoryBytes: 65536, maxLogBytes: 1024, maxFileBytes: 1024,
        sandbox: { memories: 0, tables: 0, memoryPagesEach: 0, tableEntriesEach: 0, perModule: {} },
        control: new SharedArrayBuffer(4), hostPort: ports.port2, channel: CallChannel.create().sab, callPort: calls.port2,
      },
      transferList: [ports.port2, calls.port2],
    });
    try {
      const message = await new Promise<{ type: string; message: string }>((resolve) => worker.once('message', resolve));
      assert.equal(message.type, 'init-failed');
      assert.deepEqual(JSON.parse(message.message), ['undefined', 'undefined', 'undefined']);
    } finally {
      await worker.terminate();
      ports.port1.close();
      calls.port1.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
