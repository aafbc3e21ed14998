import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry, ensureExamplesBuilt } from '../../main/plugins/index.js';
import { collect, exited, spawnCli } from '../helpers/cli.js';
import { TEST_CACHE_DIR } from '../helpers/wasm-fixtures.js';

/** Runs `chatty-gateway plugin …` as a real child process. */
async function cli(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawnCli(['plugin', ...args]);
  const [out, err, { code }] = await Promise.all([collect(child.stdout), collect(child.stderr), exited(child)]);
  return { code, out, err };
}

describe('chatty-gateway plugin new / build, and the examples for serve', () => {
  let root: string;
  let pluginDir: string;

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'chatty-build-'));
    pluginDir = join(root, 'authored', 'word-tool');
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('plugin new copies the template under the new name, with the WIT beside it', async () => {
    const { code, out } = await cli(['new', 'word-tool', '--dir', join(root, 'authored')]);
    assert.equal(code, 0);
    assert.match(out, /created .*word-tool/);
    assert.match(out, /chatty-gateway plugin build/);
    assert.match(readFileSync(join(pluginDir, 'module.toml'), 'utf8'), /name = "word-tool"/);
    assert.match(readFileSync(join(pluginDir, 'src', 'plugin.js'), 'utf8'), /const NAME = 'word-tool';/);
    assert.equal(readFileSync(join(pluginDir, 'wit', 'plugin.wit'), 'utf8'), readFileSync(new URL('../../main/plugins/wit/plugin.wit', import.meta.url), 'utf8'));
    assert.equal(existsSync(join(pluginDir, 'plugin.wasm')), false);
  });

  it('plugin new refuses an existing directory and a bad name; bad usage exits 2', async () => {
    assert.equal((await cli(['new', 'word-tool', '--dir', join(root, 'authored')])).code, 1);
    const bad = await cli(['new', '../evil', '--dir', root]);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /plugin name/);
    assert.equal((await cli(['new'])).code, 2);
    assert.equal((await cli(['frobnicate'])).code, 2);
    assert.equal((await cli(['build', join(root, 'nowhere')])).code, 1);
  });

  it('ensureExamplesBuilt builds once into the cache and reuses the build', async () => {
    const cacheDir = join(root, 'examples-cache');
    const progress: string[] = [];
    const modulesDir = await ensureExamplesBuilt(join(root, 'authored'), { cacheDir, onProgress: (l) => progress.push(l) });
    assert.deepEqual(progress.length, 1);
    const built = join(modulesDir, 'word-tool', 'plugin.wasm');
    const firstBuild = statSync(built).mtimeMs;
    assert.equal(existsSync(join(pluginDir, 'plugin.wasm')), false, 'nothing is written into the source tree');
    const again = await ensureExamplesBuilt(join(root, 'authored'), { cacheDir, onProgress: (l) => progress.push(l) });
    assert.equal(again, modulesDir);
    assert.equal(progress.length, 1);
    assert.equal(statSync(built).mtimeMs, firstBuild);

    const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log() {} } });
    try {
      const report = await registry.scanDirectory(modulesDir);
      assert.deepEqual(report.failed, []);
      const handle = registry.get('word-tool')!;
      assert.equal((await handle.metadata()).name, 'word-tool');
      assert.deepEqual((await handle.listTools()).map((t) => t.name), ['greet']);
      assert.deepEqual(await handle.invokeTool({ name: 'greet', argumentsJson: '{"name":"Ada"}', callId: '1' }), {
        ok: true,
        value: { content: 'Hello, Ada!', usage: undefined },
      });
      const refused = await handle.invokeTool({ name: 'greet', argumentsJson: '{}', callId: '2' });
      assert.deepEqual(refused, { ok: false, error: { kind: 'invalid-arguments', message: '`name` must be a non-empty string' } });
    } finally {
      await registry.close();
    }
  });

  it('plugin build writes the component the manifest names', async () => {
    const { code, out } = await cli(['build', pluginDir]);
    assert.equal(code, 0, out);
    assert.match(out, /built .*plugin\.wasm/);
    assert.ok(statSync(join(pluginDir, 'plugin.wasm')).size > 1024 * 1024);
  });
});
