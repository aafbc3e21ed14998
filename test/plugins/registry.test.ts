import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ModuleDirectory } from '../../main/gateway/index.js';
import { createHash } from 'node:crypto';
import { userCacheDir } from '../../main/owner-only/index.js';
import { ModuleRegistry, PluginCallError, PluginLoadError, defaultPluginCacheDir, type ScanReport } from '../../main/plugins/index.js';
import { ComponentCache, transpilerVersion } from '../../main/plugins/component-cache.js';
import { checkWorld } from '../../main/plugins/world.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

const quiet = { log(): void {} };

describe('ModuleRegistry.scanDirectory', () => {
  let root: string;
  let registry: ModuleRegistry;
  let report: ScanReport;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'chatty-scan-'));
    const echo = await buildFixture('echo');
    writeModuleDir(root, 'a-echo', { component: echo, manifest: fixtureManifest('echo') });
    writeModuleDir(root, 'b-bad-toml', { manifest: '[module\n' });
    writeModuleDir(root, 'c-dup', { component: echo, manifest: fixtureManifest('echo') });
    writeModuleDir(root, 'd-other-world', { component: await buildFixture('other-world'), manifest: fixtureManifest('other') });
    writeModuleDir(root, 'e-remote', { manifest: '[module]\nname = "far"\nversion = "2.0.0"\ndescription = "runs elsewhere"\nexecution_mode = "remote"\n[protocols]\na2a = true\n' });
    writeModuleDir(root, 'f-sockets', { component: await buildFixture('sockets'), manifest: fixtureManifest('sockets') });
    writeModuleDir(root, 'g-missing-wasm', { manifest: fixtureManifest('missing') });
    writeModuleDir(root, 'h-not-wasm', { component: new TextEncoder().encode('not a component'), manifest: fixtureManifest('garbage') });
    writeModuleDir(root, 'i-second', { component: echo, manifest: fixtureManifest('second').replace('mcp = true', 'mcp = false') });
    mkdirSync(join(root, 'j-no-manifest'));
    writeFileSync(join(root, 'k-a-file'), 'not a directory');
    writeModuleDir(root, 'l-remote-only', { manifest: '[module]\nname = "far2"\nversion = "1"\nexecution_mode = "remote_only"\n' });
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: quiet });
    report = await registry.scanDirectory(root);
  });

  after(async () => {
    await registry.close();
    rmSync(root, { recursive: true, force: true });
  });

  const reasonFor = (dir: string): string => {
    const failed = report.failed.find((f) => f.dir === join(root, dir));
    assert.ok(failed, `${dir} should have failed`);
    return failed.reason;
  };

  it('loads the good modules in name order and never stops at a bad one', () => {
    assert.deepEqual(report.loaded.map((l) => l.name), ['echo', 'second']);
    assert.deepEqual(report.loaded.map((l) => l.dir), [join(root, 'a-echo'), join(root, 'i-second')]);
    assert.deepEqual(
      report.failed.map((f) => f.dir),
      ['b-bad-toml', 'c-dup', 'd-other-world', 'f-sockets', 'g-missing-wasm', 'h-not-wasm'].map((d) => join(root, d)),
    );
  });

  it('names the reason of each failure', () => {
    assert.match(reasonFor('b-bad-toml'), /^module\.toml:1:8: not valid TOML: /);
    assert.match(reasonFor('c-dup'), /duplicate module name 'echo' \(already loaded from .*a-echo\)/);
    assert.match(reasonFor('d-other-world'), /does not export chatty:plugin\/plugin@0\.3\.0; it targets example:other\/greeter@1\.0\.0/);
    assert.match(reasonFor('f-sockets'), /imports wasi:sockets\/\S+@0\.2\.0, which plugins may not use/);
    assert.match(reasonFor('g-missing-wasm'), /plugin\.wasm does not exist/);
    assert.match(reasonFor('h-not-wasm'), /cannot read the component/);
  });

  it('reports remote modules without loading them', () => {
    assert.deepEqual(report.remote.map((r) => [r.name, r.executionMode]), [['far', 'remote'], ['far2', 'remote_only']]);
    const far = registry.remote('far');
    assert.ok(far);
    assert.equal(far.version, '2.0.0');
    assert.equal(far.description, 'runs elsewhere');
    assert.deepEqual(far.protocols, { mcp: false, a2a: true });
    assert.equal(registry.get('far'), undefined);
    assert.deepEqual(registry.remoteModules().map((r) => r.name), ['far', 'far2']);
  });

  it('get and list expose the handles with the manifest facts', () => {
    const echo = registry.get('echo');
    assert.ok(echo);
    assert.equal(echo.name, 'echo');
    assert.equal(echo.version, '1.0.0');
    assert.equal(echo.description, 'fixture echo');
    assert.deepEqual(echo.protocols, { mcp: true, a2a: false });
    assert.equal(echo.executionMode, 'local');
    assert.equal(echo.manifest.module.wasm, 'plugin.wasm');
    assert.deepEqual(registry.list().map((h) => h.name), ['echo', 'second']);
    assert.deepEqual(registry.get('second')?.protocols, { mcp: false, a2a: false });
    assert.equal(registry.get('nope'), undefined);
  });

  it('satisfies the gateway\'s ModuleDirectory structurally', () => {
    const directory: ModuleDirectory = registry;
    assert.deepEqual(
      directory.list().map((m) => ({ name: m.name, version: m.version, description: m.description, protocols: m.protocols })),
      [
        { name: 'echo', version: '1.0.0', description: 'fixture echo', protocols: { mcp: true, a2a: false } },
        { name: 'second', version: '1.0.0', description: 'fixture second', protocols: { mcp: false, a2a: false } },
      ],
    );
  });

  it('a name already taken by an earlier scan fails the later module', async () => {
    const other = mkdtempSync(join(tmpdir(), 'chatty-scan2-'));
    try {
      writeModuleDir(other, 'x', { component: await buildFixture('echo'), manifest: fixtureManifest('echo') });
      const again = await registry.scanDirectory(other);
      assert.deepEqual(again.loaded, []);
      assert.match(again.failed[0]!.reason, /duplicate module name 'echo'/);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('a missing directory is a failure, not an exception', async () => {
    const missing = await registry.scanDirectory(join(root, 'nowhere'));
    assert.equal(missing.failed.length, 1);
    assert.match(missing.failed[0]!.reason, /cannot read the modules directory/);
  });
});

describe('what a plugin written in JavaScript is told at load', () => {
  const PLUGIN_JS = 'export const plugin = {};\n';
  let root: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'chatty-stale-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  /** Loads the one module in `dir` with a logger that keeps its warnings. */
  async function load(dir: string): Promise<{ warnings: string[]; report: ScanReport }> {
    const warnings: string[] = [];
    const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: (level, message) => void (level === 'warn' && warnings.push(message)) } });
    try {
      return { warnings, report: await registry.scanDirectory(dir) };
    } finally {
      await registry.close();
    }
  }

  /** A plugin directory with its component written at `builtAt` and its sources at `editedAt` (seconds). */
  async function plugin(name: string, builtAt: number, editedAt: number): Promise<string> {
    const parent = join(root, name);
    const dir = writeModuleDir(parent, name, { component: await buildFixture('echo'), manifest: fixtureManifest(name), extra: { 'src/plugin.js': PLUGIN_JS, 'src/tools.js': PLUGIN_JS } });
    utimesSync(join(dir, 'plugin.wasm'), builtAt, builtAt);
    for (const file of ['src/plugin.js', 'src/tools.js']) utimesSync(join(dir, file), editedAt, editedAt);
    return parent;
  }

  it('sources newer than plugin.wasm: served, with a warning naming the plugin build command', async () => {
    const parent = await plugin('stale', 1_000_000, 2_000_000);
    const { warnings, report } = await load(parent);
    assert.deepEqual(report.loaded.map((l) => l.name), ['stale']);
    assert.deepEqual(warnings, [
      `plugin.wasm is older than src/plugin.js, src/tools.js: serving the build from before that change; rebuild it with \`npx chatty-gateway plugin build ${join(parent, 'stale')}\``,
    ]);
  });

  it('a component built after its last edit: no warning', async () => {
    const { warnings, report } = await load(await plugin('fresh', 2_000_000, 1_000_000));
    assert.deepEqual(report.loaded.map((l) => l.name), ['fresh']);
    assert.deepEqual(warnings, []);
  });

  it('no plugin.wasm yet: not loaded, and the reason says to run plugin build (only where there is JavaScript to build)', async () => {
    const parent = join(root, 'unbuilt');
    const dir = writeModuleDir(parent, 'unbuilt', { manifest: fixtureManifest('unbuilt'), extra: { 'src/plugin.js': PLUGIN_JS } });
    writeModuleDir(parent, 'foreign', { manifest: fixtureManifest('foreign') });
    const { report } = await load(parent);
    assert.deepEqual(report.loaded, []);
    assert.deepEqual(report.failed.map((f) => f.reason), [
      `the component ${join(parent, 'foreign', 'plugin.wasm')} does not exist`,
      `the component ${join(dir, 'plugin.wasm')} does not exist (build it: \`npx chatty-gateway plugin build ${dir}\`)`,
    ]);
  });
});

describe('ModuleRegistry.unload and close', () => {
  it('unload stops the worker, rejects pending calls and frees the name', async () => {
    const root = mkdtempSync(join(tmpdir(), 'chatty-unload-'));
    const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: quiet });
    try {
      writeModuleDir(root, 'loop', { component: await buildFixture('loop'), manifest: fixtureManifest('loop') });
      await registry.scanDirectory(root);
      const handle = registry.get('loop')!;
      const running = handle.invokeTool({ name: 'loop', argumentsJson: '{}', callId: '1' });
      const queued = handle.invokeTool({ name: 'echo', argumentsJson: '{}', callId: '2' });
      const settled = Promise.allSettled([running, queued]);
      assert.equal(await registry.unload('loop'), true);
      for (const outcome of await settled) {
        assert.equal(outcome.status, 'rejected');
        const err = (outcome as PromiseRejectedResult).reason as unknown;
        assert.ok(err instanceof PluginCallError && err.kind === 'unloaded');
      }
      await assert.rejects(handle.listTools(), (err: unknown) => err instanceof PluginCallError && err.kind === 'unloaded');
      assert.equal(registry.get('loop'), undefined);
      assert.equal(await registry.unload('loop'), false);
      const reloaded = await registry.scanDirectory(root);
      assert.deepEqual(reloaded.loaded.map((l) => l.name), ['loop']);
    } finally {
      await registry.close();
      rmSync(root, { recursive: true, force: true });
    }
    assert.deepEqual(registry.list(), []);
  });
});

describe('the transpile cache', () => {
  it('is keyed by content and transpiler version, and a second registry loads from it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'chatty-cache-'));
    const cacheDir = join(root, 'cache');
    try {
      writeModuleDir(join(root, 'modules'), 'echo', { component: await buildFixture('echo'), manifest: fixtureManifest('echo') });
      writeModuleDir(join(root, 'modules'), 'trap', { component: await buildFixture('trap'), manifest: fixtureManifest('trap') });
      const first = new ModuleRegistry({ cacheDir, logger: quiet });
      const cold = await first.scanDirectory(join(root, 'modules'));
      await first.close();
      assert.deepEqual(cold.loaded.map((l) => l.cached), [false, false]);
      const entries = readdirSync(join(cacheDir, 'transpiled'));
      assert.equal(entries.length, 2);
      for (const e of entries) assert.match(e, /^[0-9a-f]{32}-jco\d+\.\d+\.\d+-f\d+$/);
      const second = new ModuleRegistry({ cacheDir, logger: quiet });
      const warm = await second.scanDirectory(join(root, 'modules'));
      assert.deepEqual(warm.loaded.map((l) => l.cached), [true, true]);
      const answer = await second.get('echo')!.invokeTool({ name: 'echo', argumentsJson: '"cached"', callId: '1' });
      assert.deepEqual(answer, { ok: true, value: { content: '"cached"', usage: undefined } });
      await second.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the transpile cache key', () => {
  it('is the content\'s SHA-256 and the transpiler version, not the path; a new transpiler misses', async () => {
    const root = mkdtempSync(join(tmpdir(), 'chatty-cachekey-'));
    const echo = await buildFixture('echo');
    const caches: ComponentCache[] = [];
    const open = (transpiler?: string): ComponentCache => {
      const cache = new ComponentCache(join(root, 'cache'), transpiler === undefined ? {} : { transpiler });
      caches.push(cache);
      return cache;
    };
    try {
      const first = await open().prepare(echo);
      assert.equal(first.cached, false);
      const hash = createHash('sha256').update(echo).digest('hex');
      assert.equal(first.key, `${hash.slice(0, 32)}-jco${transpilerVersion()}-f2`);
      assert.ok(first.dir.startsWith(join(root, 'cache', 'transpiled')));
      // The same bytes (read from anywhere) hit; different bytes miss.
      assert.equal((await open().prepare(Uint8Array.from(echo))).cached, true);
      assert.equal((await open().prepare(await buildFixture('trap'))).cached, false);
      // Another transpiler version is another entry, even for the same bytes.
      const other = await open('0.0.0-test').prepare(echo);
      assert.equal(other.cached, false);
      assert.equal(other.key, `${hash.slice(0, 32)}-jco0.0.0-test-f2`);
      assert.equal((await open('0.0.0-test').prepare(echo)).cached, true);
    } finally {
      await Promise.all(caches.map((c) => c.close()));
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('compiles a component once per process and memory cap', async () => {
    const root = mkdtempSync(join(tmpdir(), 'chatty-compile-'));
    const cache = new ComponentCache(root);
    try {
      const prepared = await cache.prepare(await buildFixture('echo'));
      const a = cache.compile(prepared, 16);
      assert.equal(cache.compile(prepared, 16), a);
      assert.notEqual(cache.compile(prepared, 32), a);
    } finally {
      await cache.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('lives in the user cache directory by default', () => {
    assert.equal(defaultPluginCacheDir(), join(userCacheDir(), 'chatty-gateway', 'plugins'));
  });
});

describe('the world check (unit)', () => {
  const plugin = 'chatty:plugin/plugin@0.3.0';
  it('accepts the plugin world with WASI basics', () => {
    checkWorld({ imports: ['chatty:plugin/types@0.3.0', 'chatty:plugin/llm@0.3.0', 'wasi:cli/stdout@0.2.3', 'wasi:io/streams@0.2.0', 'wasi:filesystem/preopens@0.2.0', 'wasi:http/types@0.2.10', 'wasi:http/outgoing-handler@0.2.10'], exports: [plugin] });
  });
  it('refuses, naming it, any import beyond WASI basics and chatty:plugin/*@0.3.0', () => {
    for (const name of ['wasi:sockets/tcp@0.2.0', 'wasi:http/incoming-handler@0.2.0', 'acme:net/raw@1.0.0', 'chatty:plugin/llm@0.2.0', 'chatty:plugin/shell@0.3.0', 'wasi:cli/stdout@0.3.0']) {
      assert.throws(() => checkWorld({ imports: [name], exports: [plugin] }), (err: unknown) => err instanceof PluginLoadError && err.message.includes(`imports ${name}`), name);
    }
  });
  it('refuses a component that does not export the plugin interface, naming what it targets', () => {
    assert.throws(() => checkWorld({ imports: [], exports: ['chatty:plugin/plugin@0.2.0'] }), /does not export chatty:plugin\/plugin@0\.3\.0; it targets chatty:plugin\/plugin@0\.2\.0/);
    assert.throws(() => checkWorld({ imports: [], exports: [] }), /it targets nothing/);
  });
});

describe('manifest limits at load', () => {
  it('clamps to the host ceiling, logs the warning, reports it, and enforces the clamped limit', async () => {
    const root = mkdtempSync(join(tmpdir(), 'chatty-clamp-'));
    const logs: string[] = [];
    const registry = new ModuleRegistry({
      cacheDir: TEST_CACHE_DIR,
      ceilings: { maxExecutionMs: 300 },
      logger: { log: (level, message) => logs.push(`${level} ${message}`) },
    });
    try {
      writeModuleDir(root, 'loop', { component: await buildFixture('loop'), manifest: fixtureManifest('loop', '[resources]\nmax_execution_ms = 50000\n') });
      const report = await registry.scanDirectory(root);
      assert.equal(report.loaded.length, 1);
      assert.match(report.loaded[0]!.warnings.join('\n'), /max_execution_ms = 50000 is above the host ceiling; clamped to 300 ms/);
      assert.ok(logs.some((l) => /^warn .*clamped to 300 ms/.test(l)));
      const loop = registry.get('loop')!;
      assert.equal(loop.limits.maxExecutionMs, 300);
      const started = performance.now();
      await assert.rejects(loop.invokeTool({ name: 'loop', argumentsJson: '{}', callId: '1' }), (err: unknown) => err instanceof PluginCallError && err.kind === 'timeout');
      // Unclamped, the loop would run its 50 s: 20 s tells the 300 ms clamp from it, however loaded the machine.
      assert.ok(performance.now() - started < 20_000);
    } finally {
      await registry.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a ceiling option can lower but never raise the host ceilings (256 MiB, 60 s)', async () => {
    const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, ceilings: { maxExecutionMs: 10 ** 9, maxMemoryMb: 10 ** 6 }, logger: quiet });
    const root = mkdtempSync(join(tmpdir(), 'chatty-ceil-'));
    try {
      writeModuleDir(root, 'echo', { component: await buildFixture('echo'), manifest: fixtureManifest('echo', '[resources]\nmax_execution_ms = 999999\nmax_memory_mb = 99999\n') });
      await registry.scanDirectory(root);
      assert.deepEqual({ ...registry.get('echo')!.limits }, { maxMemoryMb: 256, maxExecutionMs: 60_000, maxOutputBytes: 1024 * 1024, metadataTimeoutMs: 1000 });
    } finally {
      await registry.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
