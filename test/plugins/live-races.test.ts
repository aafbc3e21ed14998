import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ModuleRegistry } from '../../main/plugins/index.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

/**
 * A reload racing an unload or a close. The race is made deterministic by the registry's own
 * logger: a manifest whose `max_execution_ms` is above the ceiling is said (clamped) as its load
 * begins, and the test unloads or closes right then, while the new instance is still loading.
 */
describe('ModuleRegistry: a reload racing an unload or a close', () => {
  const roots: string[] = [];
  after(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });

  /** A registry serving `racy`, and a hook run when its next load begins. */
  const setup = async (): Promise<{ registry: ModuleRegistry; logs: string[]; onLoad: (hook: () => void) => void; dir: string }> => {
    const root = mkdtempSync(join(tmpdir(), 'chatty-live-races-'));
    roots.push(root);
    const dir = writeModuleDir(root, 'racy', { manifest: fixtureManifest('racy'), component: await buildFixture('echo') });
    const logs: string[] = [];
    let hook: (() => void) | undefined;
    const registry = new ModuleRegistry({
      cacheDir: TEST_CACHE_DIR,
      ceilings: { maxExecutionMs: 5_000 },
      logger: {
        log: (_level, message) => {
          logs.push(message);
          if (/clamped/.test(message) && hook) {
            const run = hook;
            hook = undefined;
            run();
          }
        },
      },
    });
    await registry.loadModule(dir);
    writeFileSync(join(dir, 'module.toml'), fixtureManifest('racy', '\n[resources]\nmax_execution_ms = 60000\n'));
    return { registry, logs, onLoad: (h) => (hook = h), dir };
  };

  it('unloaded while its reload loads: the new instance is closed, nothing serves, and the log does not claim an old one serves on', async () => {
    const { registry, logs, onLoad } = await setup();
    try {
      let unloaded: Promise<boolean> | undefined;
      onLoad(() => (unloaded = registry.unload('racy')));
      await assert.rejects(registry.reload('racy'), { name: 'PluginLoadError', message: "module 'racy' was unloaded while it loaded" });
      assert.equal(await unloaded, true);
      assert.equal(registry.get('racy'), undefined);
      assert.deepEqual(registry.list(), []);
      const line = logs.find((l) => /reload/.test(l));
      assert.equal(line, "reload abandoned: module 'racy' was unloaded while it loaded");
    } finally {
      await registry.close();
    }
  });

  it('closed while a reload loads: the reload fails, close resolves, nothing serves', async () => {
    const { registry, onLoad } = await setup();
    let closed: Promise<void> | undefined;
    onLoad(() => (closed = registry.close()));
    await assert.rejects(registry.reload('racy'), { name: 'PluginLoadError' });
    await closed;
    assert.deepEqual(registry.list(), []);
  });
});
