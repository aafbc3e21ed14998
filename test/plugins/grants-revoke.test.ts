/**
 * A grant taken back while the module is served: its entry removed from the grants file (the way
 * docs/plugins.md gives to revoke one). Before, the module kept serving with what it had been
 * granted until its next load, a call in flight kept reading files, and a fresh call could too.
 * Now the module is unloaded within the file's poll (about a second): the call in flight ends
 * (its worker, and with it a fetch thread, stops), later calls find it gone, it is listed as
 * ungranted saying why, and granted again it is served again.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { PluginGrantError } from '../../main/plugins/grants/index.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { componentDigest, ModuleRegistry, PluginCallError } from '../../main/plugins/index.js';
import { GrantsFile } from '../../main/plugins/grants/index.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

const FILE_ASK = { capability: 'file', detail: 'read files under ./data' } as const;

describe('a grant withdrawn from the grants file while the module is served', { timeout: 180_000 }, () => {
  let scratch: string;
  let registry: ModuleRegistry;
  let file: string;
  let slow: Uint8Array;

  before(async () => {
    slow = await buildFixture('slow');
    scratch = mkdtempSync(join(tmpdir(), 'chatty-grants-revoke-'));
    const root = join(scratch, 'modules');
    writeModuleDir(root, 'notes', { manifest: fixtureManifest('notes', '[files]\nroot = "data"\n'), component: slow, extra: { 'data/note.txt': 'a note' } });
    file = join(scratch, 'plugin-grants.json');
    new GrantsFile(file).remember('notes', componentDigest(slow), [FILE_ASK]);
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: () => {} }, grants: { file, mode: 'deny' }, engineIdleMs: 0 });
    assert.deepEqual((await registry.scanDirectory(root)).loaded.map((l) => l.name), ['notes']);
  });
  after(async () => {
    await registry.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  /** Removes every entry, as a person editing the file by hand would (written aside, renamed in, 0600). */
  const revokeAll = (): void => {
    writeFileSync(`${file}.edit`, JSON.stringify({ version: 1, grants: [] }), { mode: 0o600 });
    renameSync(`${file}.edit`, file);
  };
  const change = (name: string, kind: string): Promise<void> =>
    new Promise((resolve) => {
      const stop = registry.onChange((c) => {
        if (c.name === name && c.change === kind) {
          stop();
          resolve();
        }
      });
    });

  it('ends the call in flight, unloads the module and lists it ungranted; granted again, it is served again', async () => {
    const handle = registry.get('notes')!;
    assert.deepEqual(await handle.invokeTool({ name: 'read', argumentsJson: 'note.txt', callId: 'r0' }), { ok: true, value: { content: 'a note', usage: undefined } });
    // A call that runs 20 s, well past the poll: only the revoke ends it sooner.
    const inFlight = handle.invokeTool({ name: 'slow', argumentsJson: '20000', callId: 's1' });
    const outcome = inFlight.then(() => 'answered', (err: unknown) => err);
    const unloaded = change('notes', 'unloaded');
    const revokedAt = performance.now();
    revokeAll();
    const err = await outcome;
    const took = performance.now() - revokedAt;
    assert.ok(err instanceof PluginCallError && err.kind === 'unloaded', `the call in flight: ${String(err)}`);
    // Its kind shows the revoke ended it (not ended, it answers at 20 s); the bound, under those
    // 20 s, leaves a loaded machine room for the file's ~1 s poll and the unload.
    assert.ok(took < 15_000, `the call ran on ${Math.round(took)} ms after its grant was withdrawn`);
    await unloaded;
    assert.equal(registry.get('notes'), undefined);
    const pending = registry.pending().find((p) => p.name === 'notes');
    assert.equal(pending?.state, 'ungranted');
    assert.match(pending!.reason!, /^not granted: its grant of file \(read files under \.\/data\) for component sha256:[0-9a-f]{12}… was withdrawn from the grants file; to grant it: `chatty-gateway plugin grant notes`/);

    const online = change('notes', 'served');
    new GrantsFile(file).remember('notes', componentDigest(slow), [FILE_ASK]);
    await online;
    assert.deepEqual(await registry.get('notes')!.invokeTool({ name: 'read', argumentsJson: 'note.txt', callId: 'r1' }), { ok: true, value: { content: 'a note', usage: undefined } });
  });

  it('ends the calls an instance unloaded with finishCalls is finishing (serve --watch, a folder gone), listing nothing for the name', async () => {
    const handle = registry.get('notes')!;
    // A call that runs 20 s, well past the poll: only the revoke ends it sooner (before, the unload stopped the watch and it ran on).
    const outcome = handle.invokeTool({ name: 'slow', argumentsJson: '20000', callId: 'u1' }).then(() => 'answered', (err: unknown) => err);
    const unloading = registry.unload('notes', { finishCalls: true });
    assert.equal(registry.get('notes'), undefined);
    revokeAll();
    const err = await outcome;
    assert.ok(err instanceof PluginCallError && err.kind === 'unloaded', `the call in flight: ${String(err)}`);
    await unloading;
    assert.deepEqual(registry.pending(), []); // unloaded, not ungranted: its name is free
    await assert.rejects(registry.loadModule(join(scratch, 'modules', 'notes')), PluginGrantError);
    const online = change('notes', 'served'); // the refused load waits for the file: granted, it is served for the next test
    new GrantsFile(file).remember('notes', componentDigest(slow), [FILE_ASK]);
    await online;
  });

  it('ends the calls a local instance is finishing after a reload made the module remote', async () => {
    const dir = join(scratch, 'modules', 'notes');
    const handle = registry.get('notes')!;
    const outcome = handle.invokeTool({ name: 'slow', argumentsJson: '20000', callId: 'm1' }).then(() => 'answered', (err: unknown) => err);
    const manifest = readFileSync(join(dir, 'module.toml'), 'utf8');
    writeFileSync(join(dir, 'module.toml'), manifest.replace('wasm = "plugin.wasm"\n', 'wasm = "plugin.wasm"\nexecution_mode = "remote"\n'));
    await registry.reload('notes');
    assert.ok(registry.remote('notes'));
    revokeAll();
    const err = await outcome;
    assert.ok(err instanceof PluginCallError && err.kind === 'unloaded', `the call in flight: ${String(err)}`);
    // Local and granted again, for the next test.
    writeFileSync(join(dir, 'module.toml'), manifest);
    new GrantsFile(file).remember('notes', componentDigest(slow), [FILE_ASK]);
    await registry.reload('notes');
    assert.ok(registry.get('notes'));
  });

  it("is not what a rebuild's grant replacing the old digest's entry does: the old instance finishes its call and the new one is swapped in", async () => {
    const echo = await buildFixture('echo');
    const before = registry.get('notes')!;
    writeFileSync(join(scratch, 'modules', 'notes', 'plugin.wasm'), echo);
    await assert.rejects(registry.reload('notes'), PluginGrantError); // the new digest waits; the old instance serves on
    const inFlight = before.invokeTool({ name: 'slow', argumentsJson: '2500', callId: 's2' });
    const reloaded = change('notes', 'reloaded');
    // `plugin grant notes` from another terminal: the entry now names the new digest only.
    new GrantsFile(file).remember('notes', componentDigest(echo), [FILE_ASK]);
    await reloaded;
    assert.deepEqual(await inFlight, { ok: true, value: { content: '2500', usage: undefined } });
    assert.notEqual(registry.get('notes'), before);
    assert.deepEqual(await registry.get('notes')!.invokeTool({ name: 'read', argumentsJson: 'note.txt', callId: 'r2' }), { ok: true, value: { content: 'a note', usage: undefined } });
  });
});
