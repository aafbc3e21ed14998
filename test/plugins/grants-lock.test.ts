/**
 * The bundled examples' `plugins.lock` (issue 20 item 3): pinned to their sources (their build is
 * not reproducible: docs/plugins.md, "Grants"), it pre-grants what each example asks for, so a
 * first `serve` with no one to ask still serves them.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { bundledExamplesLock, openModules } from '../../main/compose/modules.js';
import { examplesDir, parseManifest } from '../../main/plugins/index.js';
import { pluginAsks, readPluginsLock, sameAsk } from '../../main/plugins/grants/index.js';
import { sourcesDigest } from '../../main/plugins/build/source-digest.js';
import { tempDir } from '../helpers/gateway.js';
import { TEST_CACHE_DIR, buildFixture } from '../helpers/wasm-fixtures.js';

const scratch = tempDir('chatty-grants-lock-');
after(() => scratch.remove());

const EXAMPLES = ['json-tools', 'text-tools'];

describe("the bundled examples' plugins.lock", () => {
  it('pre-grants everything each example asks for, pinned to its current sources (update the entry printed when an example changes)', () => {
    const lock = readPluginsLock(bundledExamplesLock());
    for (const name of EXAMPLES) {
      const dir = join(examplesDir(), name);
      const { manifest } = parseManifest(readFileSync(join(dir, 'module.toml'), 'utf8'));
      // As `serve` asks: no llm or billing provider, the component imports the whole world.
      const asks = pluginAsks({ manifest, imports: ['chatty:plugin/llm@0.3.0', 'chatty:plugin/billing@0.3.0', 'chatty:plugin/file@0.3.0'], providers: {} });
      const entry = lock.find((e) => e.name === name && e.sources === sourcesDigest(dir));
      const expected = JSON.stringify({ name, sources: sourcesDigest(dir), granted: asks });
      if (asks.length === 0) continue;
      assert.ok(entry, `examples/plugins/plugins.lock has no entry for ${name}'s sources; it should hold ${expected}`);
      for (const ask of asks) assert.ok(entry.granted.some((g) => sameAsk(g, ask)), `${name}'s entry does not grant ${JSON.stringify(ask)}; it should be ${expected}`);
    }
    assert.ok(lock.every((e) => e.digest === undefined), 'the examples are pinned to their sources, never to a component digest');
  });

  it('serves json-tools ([files] root) on a start with no one to ask, through the examples build cache', async () => {
    const component = await buildFixture('echo');
    const opened = await openModules(undefined, {
      registry: { cacheDir: TEST_CACHE_DIR, logger: { log: () => {} }, grants: { mode: 'deny' } },
      examples: { cacheDir: join(scratch.path, 'built'), build: async (dir) => writeFileSync(join(dir, 'plugin.wasm'), component) },
    });
    try {
      assert.deepEqual(opened.scan.failed, []);
      assert.deepEqual(opened.registry.list().map((m) => m.name), EXAMPLES);
    } finally {
      await opened.registry.close();
    }
  });

  it("is the bundled examples' alone: the same built copies named with --modules-dir are not pre-granted", async () => {
    const component = await buildFixture('echo');
    const built = join(scratch.path, 'built-named');
    const first = await openModules(undefined, {
      registry: { cacheDir: TEST_CACHE_DIR, logger: { log: () => {} }, grants: { mode: 'deny' } },
      examples: { cacheDir: built, build: async (dir) => writeFileSync(join(dir, 'plugin.wasm'), component) },
    });
    await first.registry.close();
    const named = await openModules(join(built, 'modules'), { registry: { cacheDir: TEST_CACHE_DIR, logger: { log: () => {} }, grants: { mode: 'deny' } } });
    try {
      assert.deepEqual(named.registry.pending().map((p) => [p.name, p.state]), [['json-tools', 'ungranted']]);
      assert.deepEqual(named.registry.list().map((m) => m.name), ['text-tools']);
    } finally {
      await named.registry.close();
    }
  });
});
