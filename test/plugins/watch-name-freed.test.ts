/**
 * A folder refused because another served its module's name (or a look-alike of it) is served
 * once that name is freed (review r2, F9). Before, `b/` (Echo) refused beside `a/` (echo) stayed
 * unserved after `a/` was removed, until a change inside `b/` or a restart.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ModuleRegistry, watchModules } from '../../main/plugins/index.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';
import { lines, sayingLogger } from './watch-lines.js';

const root = mkdtempSync(join(tmpdir(), 'chatty-name-freed-'));
after(() => rmSync(root, { recursive: true, force: true }));

for (const [how, second, free] of [
  ['its folder removed', 'Echo', (): void => rmSync(join(root, 'a'), { recursive: true })],
  ['renamed in its module.toml', 'echo', (): void => writeFileSync(join(root, 'a', 'module.toml'), fixtureManifest('other'))],
] as const) {
  it(`a module refused as a duplicate of '${second === 'echo' ? 'echo' : 'echo (in other case)'}' is served once echo is ${how}`, { timeout: 180_000 }, async () => {
    rmSync(join(root, 'a'), { recursive: true, force: true });
    rmSync(join(root, 'b'), { recursive: true, force: true });
    const echo = await buildFixture('echo');
    writeModuleDir(root, 'a', { manifest: fixtureManifest('echo'), component: echo });
    writeModuleDir(root, 'b', { manifest: fixtureManifest(second), component: echo });
    const said = lines();
    const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: sayingLogger(said.say) });
    const report = await registry.scanDirectory(root);
    assert.equal(report.failed.length, 1);
    const watcher = watchModules(registry, root, { say: said.say, debounceMs: 50 });
    try {
      free();
      await said.next(new RegExp(`^module ${second}: loaded: served from b$`)); // before: never
      assert.equal(registry.get(second)?.dir, join(root, 'b'));
    } finally {
      await watcher.close();
      await registry.close();
    }
  });
}
