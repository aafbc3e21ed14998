import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry, componentDigest, watchModules, type ModulesWatcher } from '../../main/plugins/index.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';
import { lines, sayingLogger } from './watch-lines.js';

/**
 * `serve --watch` while a plugin author edits a plugin that asks for a capability (found by a new
 * user, issue 20): the rebuilt component is a new digest, so its reload waits for a grant. The
 * watcher still says it rebuilt it, and that the new build waits for a grant while the previous
 * build serves, rather than only the registry's "reload failed". A real registry asking at a desk
 * nobody answers; the build is a stand-in that writes another real component.
 */
describe('serve --watch: a rebuilt plugin whose new digest waits for a grant', { timeout: 180_000 }, () => {
  let root: string;
  let registry: ModuleRegistry;
  let watcher: ModulesWatcher;
  const said = lines();

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'chatty-watch-grant-'));
    const first = await buildFixture('echo');
    writeModuleDir(root, 'asker', { manifest: fixtureManifest('asker', '[files]\nroot = "data"\n'), component: first, extra: { 'data/x.txt': 'x', 'src/plugin.js': 'export const plugin = {};\n' } });
    // The source is older than the component: nothing to build at start.
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(root, 'asker', 'src', 'plugin.js'), old, old);
    const lock = join(root, '..', `${root.split('/').pop()}.lock`);
    writeFileSync(lock, JSON.stringify({ version: 1, plugins: [{ name: 'asker', digest: componentDigest(first), granted: [{ capability: 'file', detail: 'read files under ./data' }] }] }));
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, grants: { mode: 'ask', locks: [lock] }, logger: sayingLogger(said.say) });
    await registry.scanDirectory(root);
    assert.ok(registry.get('asker'), 'the first build is served, pre-granted by the lock');
    const rebuilt = await buildFixture('slow');
    watcher = watchModules(registry, root, { say: said.say, debounceMs: 50, build: async (dir) => writeFileSync(join(dir, 'plugin.wasm'), rebuilt) });
  });
  after(async () => {
    await watcher?.close();
    await registry?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('says it rebuilt the plugin and that the new build waits for a grant; the previous build serves on', async () => {
    const served = registry.get('asker');
    mkdirSync(join(root, 'asker', 'src'), { recursive: true });
    writeFileSync(join(root, 'asker', 'src', 'plugin.js'), 'export const plugin = { edited: true };\n');
    const line = await said.next(/^module asker: rebuilt/);
    assert.match(line, /^module asker: rebuilt in \d+\.\d s \(src\/plugin\.js changed\); the new build waits for a grant, and the previous build keeps serving until it is granted$/);
    assert.equal(registry.get('asker'), served);
  });

  it('a module.toml that adds an ask: the line says the change waits for a grant, not only that a reload failed', async () => {
    const served = registry.get('asker');
    writeFileSync(join(root, 'asker', 'module.toml'), fixtureManifest('asker', '[files]\nroot = "data"\n\n[network]\nallow = ["127.0.0.1:8080"]\n'));
    const line = await said.next(/^module asker: not reloaded/);
    assert.equal(line, 'module asker: not reloaded yet (module.toml changed): it waits for a grant; the previous instance keeps serving until it is granted');
    assert.equal(registry.get('asker'), served);
  });

  it('no line says the reload failed: a new component waiting for its grant has not failed', () => {
    assert.deepEqual(said.all.filter((l) => /reload failed/.test(l)), []);
  });
});
