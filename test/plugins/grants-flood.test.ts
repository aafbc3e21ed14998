/**
 * A plugin folder that asks for grants over and over (its module.toml rewritten with a new
 * `[network] allow` entry at every change, each change a reload that asks again), and a modules
 * folder of many plugins all asking at once: the person at the desk must not be flooded. A
 * module is put to the desk at most `MAX_UNGRANTED_ASKS` times in a registry's life without being
 * granted, and at most `MAX_OPEN_GRANT_ASKS` requests wait at the desk at once; the rest are
 * listed ungranted saying so and how to grant them, and a grant (the file) still serves them.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { componentDigest, ModuleRegistry, type PluginGrantRequest } from '../../main/plugins/index.js';
import { GrantsFile, PluginGrantError } from '../../main/plugins/grants/index.js';
import { MAX_OPEN_GRANT_ASKS, MAX_UNGRANTED_ASKS } from '../../main/plugins/limits.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

describe('grant requests a plugin cannot flood a person with', { timeout: 180_000 }, () => {
  let scratch: string;
  let registry: ModuleRegistry;
  afterEach(async () => {
    await registry.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const start = (): { root: string; file: string; handed: PluginGrantRequest[] } => {
    scratch = mkdtempSync(join(tmpdir(), 'chatty-grants-flood-'));
    const file = join(scratch, 'plugin-grants.json');
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: () => {} }, grants: { file } });
    const handed: PluginGrantRequest[] = [];
    // A person who never answers (a popover left open): every request handed is counted.
    registry.grants.onRequest((request) => {
      handed.push(request);
      return new Promise(() => {});
    });
    return { root: join(scratch, 'modules'), file, handed };
  };

  it('a module reloaded with a new ask at every change is asked a few times, then not again; the file still grants it', async () => {
    const { root, file, handed } = start();
    const echo = await buildFixture('echo');
    const dir = writeModuleDir(root, 'asker', { manifest: fixtureManifest('asker', '[network]\nallow = ["a0.example.com"]\n'), component: echo });
    const reasons: string[] = [];
    for (let i = 0; i < 12; i++) {
      writeFileSync(join(dir, 'module.toml'), fixtureManifest('asker', `[network]\nallow = ["a${i}.example.com"]\n`));
      await assert.rejects(registry.loadModule(dir), (err: unknown) => err instanceof PluginGrantError && reasons.push(err.message) > 0);
    }
    assert.equal(handed.length, MAX_UNGRANTED_ASKS, `requests handed to the person: ${handed.length}`);
    assert.equal(registry.grants.waiting().length, 0, 'its last request was withdrawn by the next change, and none was put since');
    assert.match(reasons.at(-1)!, new RegExp(`^not asked again: it asks for network \\(a11\\.example\\.com\\) for component sha256:[0-9a-f]{12}…, and was put to the desk ${MAX_UNGRANTED_ASKS} times in this run without being granted; to grant it: \`chatty-gateway plugin grant asker\``));
    assert.equal(registry.pending().find((p) => p.name === 'asker')?.state, 'ungranted');

    const online = new Promise<void>((resolve) => registry.onChange((c) => c.name === 'asker' && c.change === 'served' && resolve()));
    new GrantsFile(file).remember('asker', componentDigest(echo), [{ capability: 'network', detail: 'a11.example.com' }]);
    await online;
    assert.ok(registry.get('asker'));
  });

  it(`many plugins asking at once: at most ${MAX_OPEN_GRANT_ASKS} requests wait at the desk; the others say why`, async () => {
    const { root, handed } = start();
    const echo = await buildFixture('echo');
    const count = MAX_OPEN_GRANT_ASKS + 24;
    for (let i = 0; i < count; i++) writeModuleDir(root, `p${String(i).padStart(3, '0')}`, { manifest: fixtureManifest(`p${String(i).padStart(3, '0')}`, '[files]\nroot = "data"\n'), component: echo, extra: { 'data/x': 'x' } });
    const report = await registry.scanDirectory(root);
    assert.equal(report.failed.length, count);
    assert.equal(handed.length, MAX_OPEN_GRANT_ASKS);
    assert.equal(registry.grants.waiting().length, MAX_OPEN_GRANT_ASKS);
    const notAsked = report.failed.filter((f) => f.reason.startsWith('not asked: '));
    assert.equal(notAsked.length, count - MAX_OPEN_GRANT_ASKS);
    assert.match(notAsked[0]!.reason, new RegExp(`^not asked: ${MAX_OPEN_GRANT_ASKS} other plugins' requests wait for an answer; it asks for file \\(read files under \\./data\\) for component sha256:[0-9a-f]{12}…; to grant it: \`chatty-gateway plugin grant p\\d{3}\``));
  });
});
