/**
 * The desk's bounds against a folder renaming its module and co-tenants holding every slot
 * (review r2, F3 and F4). Before, `MAX_UNGRANTED_ASKS` counted by module name, so a folder giving
 * its module a new name at each change was put to the person at every change (12 of 12, all open
 * at once); and a module refused because `MAX_OPEN_GRANT_ASKS` requests waited was never put to
 * the desk, even once they were all answered. Now the count is by folder too, a renamed module's
 * old request is withdrawn, and a slot that frees goes to the oldest module refused `desk-full`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { ModuleRegistry, type PluginGrantRequest } from '../../main/plugins/index.js';
import { PluginGrantError } from '../../main/plugins/grants/index.js';
import { MAX_OPEN_GRANT_ASKS, MAX_UNGRANTED_ASKS } from '../../main/plugins/limits.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

interface Handed {
  request: PluginGrantRequest;
  answer: (decision: 'granted' | 'denied') => void;
}

describe('turns at the grant desk', { timeout: 180_000 }, () => {
  let scratch: string;
  let registry: ModuleRegistry;
  afterEach(async () => {
    await registry.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const start = (): { root: string; handed: Handed[]; next: () => Promise<Handed> } => {
    scratch = mkdtempSync(join(tmpdir(), 'chatty-desk-turns-'));
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: () => {} }, grants: { file: join(scratch, 'plugin-grants.json') } });
    const handed: Handed[] = [];
    let waiter: ((h: Handed) => void) | undefined;
    registry.grants.onRequest((request) => new Promise((answer) => {
      const h = { request, answer };
      handed.push(h);
      waiter?.(h);
      waiter = undefined;
    }));
    const next = (): Promise<Handed> => new Promise((resolve) => (waiter = resolve));
    return { root: join(scratch, 'modules'), handed, next };
  };

  it('a folder giving its module a new name at each change is put to the desk a few times, one request open at a time', async () => {
    const { root, handed } = start();
    const echo = await buildFixture('echo');
    const dir = writeModuleDir(root, 'asker', { manifest: fixtureManifest('asker0', '[network]\nallow = ["a.example.com"]\n'), component: echo });
    for (let i = 0; i < 12; i++) {
      writeFileSync(join(dir, 'module.toml'), fixtureManifest(`asker${i}`, '[network]\nallow = ["a.example.com"]\n'));
      await assert.rejects(registry.loadModule(dir), PluginGrantError);
      assert.ok(registry.grants.waiting().length <= 1, `requests open at once: ${registry.grants.waiting().length}`);
    }
    assert.equal(handed.length, MAX_UNGRANTED_ASKS, `requests handed for 12 renames: ${handed.length}`);
    assert.match(registry.pending().find((p) => p.name === 'asker11')!.reason!, /^not asked again: /);
  });

  it(`the plugin refused while ${MAX_OPEN_GRANT_ASKS} requests waited takes the first slot that frees, before the others ask again`, async () => {
    const { root, handed, next } = start();
    const echo = await buildFixture('echo');
    const folders = Array.from({ length: MAX_OPEN_GRANT_ASKS + 1 }, (_, i) => `p${String(i).padStart(2, '0')}`);
    for (const name of folders) writeModuleDir(root, name, { manifest: fixtureManifest(name, '[network]\nallow = ["x.example.com"]\n'), component: echo });
    const report = await registry.scanDirectory(root);
    assert.equal(handed.length, MAX_OPEN_GRANT_ASKS);
    const refused = report.failed.filter((f) => /^not asked: 16 other plugins' requests wait/.test(f.reason));
    assert.equal(refused.length, 1);
    const late = refused[0]!.dir.split('/').at(-1)!;
    const tenants = folders.filter((name) => name !== late);

    // One answered: the plugin refused is handed at once, before any other can ask again.
    const nextHanded = next();
    handed[0]!.answer('denied');
    assert.equal((await nextHanded).request.plugin, late); // before: never
    assert.match(registry.pending().find((p) => p.name === late)!.reason!, /^waiting for a grant: /);

    // The others asking again meanwhile (a reload each) go behind it; the desk still holds 16.
    for (const [i, name] of tenants.entries()) {
      writeFileSync(join(root, name, 'module.toml'), fixtureManifest(name, `[network]\nallow = ["y${i}.example.com"]\n`));
      await assert.rejects(registry.loadModule(join(root, name)), PluginGrantError);
    }
    assert.ok(registry.grants.waiting().some((r) => r.plugin === late));
    assert.ok(registry.grants.waiting().length <= MAX_OPEN_GRANT_ASKS);
  });
});
