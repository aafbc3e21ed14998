/**
 * Two more paths to "an instance finishing its calls keeps a grant the file took back"
 * (85f1a44 / 639fe00 watched only the instance the unload or remote-reload retired):
 *  1. a local reload whose new module.toml asks for nothing (no [files]): `served()` of the new
 *     instance unserves the name, and the old instance, still holding `file`, finishes unwatched;
 *  2. an instance a reload retired earlier (same component, module.toml edited), then the module
 *     unloaded with finishCalls: `finishing` closes only the current handle, the older retired
 *     one runs on.
 * Both failed before (the 20 s call answered after the revoke); now every retired instance is
 * watched against what its own load asked (registry.retire, gate.retiring).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { componentDigest, ModuleRegistry, PluginCallError } from '../../main/plugins/index.js';
import { GrantsFile } from '../../main/plugins/grants/index.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

const FILE_ASK = { capability: 'file', detail: 'read files under ./data' } as const;

describe('calls a retiring instance finishes, after the grant is revoked', { timeout: 180_000 }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups) await c();
  });

  const setUp = async () => {
    const slow = await buildFixture('slow');
    const scratch = mkdtempSync(join(tmpdir(), 'review-finishing-'));
    const root = join(scratch, 'modules');
    writeModuleDir(root, 'notes', { manifest: fixtureManifest('notes', '[files]\nroot = "data"\n'), component: slow, extra: { 'data/note.txt': 'a note' } });
    const file = join(scratch, 'plugin-grants.json');
    new GrantsFile(file).remember('notes', componentDigest(slow), [FILE_ASK]);
    const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: () => {} }, grants: { file, mode: 'deny' }, engineIdleMs: 0 });
    cleanups.push(async () => {
      await registry.close();
      rmSync(scratch, { recursive: true, force: true });
    });
    assert.deepEqual((await registry.scanDirectory(root)).loaded.map((l) => l.name), ['notes']);
    const revokeAll = (): void => {
      writeFileSync(`${file}.edit`, JSON.stringify({ version: 1, grants: [] }), { mode: 0o600 });
      renameSync(`${file}.edit`, file);
    };
    return { registry, dir: join(root, 'notes'), revokeAll };
  };

  it('a local reload whose new manifest asks for nothing: the old instance (granted file) is ended by a revoke', async () => {
    const { registry, dir, revokeAll } = await setUp();
    const old = registry.get('notes')!;
    assert.deepEqual(await old.invokeTool({ name: 'read', argumentsJson: 'note.txt', callId: 'r0' }), { ok: true, value: { content: 'a note', usage: undefined } });
    const outcome = old.invokeTool({ name: 'slow', argumentsJson: '20000', callId: 's1' }).then(() => 'answered', (err: unknown) => err);
    // The new module.toml drops [files]: the new instance asks for nothing, so the gate stops watching the name.
    writeFileSync(join(dir, 'module.toml'), fixtureManifest('notes'));
    await registry.reload('notes');
    assert.notEqual(registry.get('notes'), old);
    revokeAll();
    const err = await outcome;
    assert.ok(err instanceof PluginCallError && err.kind === 'unloaded', `the old instance's call in flight, granted file, after the revoke: ${String(err)}`);
  });

  it('an instance retired by an earlier reload, then the module unloaded with finishCalls: a revoke ends its calls too', async () => {
    const { registry, dir, revokeAll } = await setUp();
    const first = registry.get('notes')!;
    const outcome = first.invokeTool({ name: 'slow', argumentsJson: '20000', callId: 's2' }).then(() => 'answered', (err: unknown) => err);
    // Same component, module.toml edited (a comment): the reload swaps in a second instance, the first finishes its call.
    writeFileSync(join(dir, 'module.toml'), `${readFileSync(join(dir, 'module.toml'), 'utf8')}# edited\n`);
    await registry.reload('notes');
    assert.notEqual(registry.get('notes'), first);
    const unloading = registry.unload('notes', { finishCalls: true }); // serve --watch: the folder is gone
    revokeAll();
    const err = await outcome;
    assert.ok(err instanceof PluginCallError && err.kind === 'unloaded', `the first instance's call in flight after the revoke: ${String(err)}`);
    await unloading;
  });
});
