/**
 * Revocations the first poll missed or a refused file let through (review r2, F5 and F6).
 * F5: the grants file's poll took its first look after the module was served, so a revoke landing
 * in between became its baseline and was never acted on: the module kept its file access. Here
 * the libuv thread pool is kept busy while the module is served, so that first look comes after
 * the revoke every time. F6: a revocation written in a way the file is refused (group-writable
 * under umask 002, a trailing comma) left the module its grant; a served module whose grants can
 * no longer be read is now unloaded (fail closed), and served again once the file reads and
 * grants it.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { pbkdf2 } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { componentDigest, ModuleRegistry } from '../../main/plugins/index.js';
import { GrantsFile } from '../../main/plugins/grants/index.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

const FILE_ASK = { capability: 'file', detail: 'read files under ./data' } as const;
const scratches: string[] = [];

async function servedNotes(logs: string[] = []): Promise<{ registry: ModuleRegistry; file: string; root: string; slow: Uint8Array }> {
  const slow = await buildFixture('slow');
  const scratch = mkdtempSync(join(tmpdir(), 'chatty-revoke-edges-'));
  scratches.push(scratch);
  const root = join(scratch, 'modules');
  writeModuleDir(root, 'notes', { manifest: fixtureManifest('notes', '[files]\nroot = "data"\n'), component: slow, extra: { 'data/note.txt': 'secret note' } });
  const file = join(scratch, 'plugin-grants.json');
  new GrantsFile(file).remember('notes', componentDigest(slow), [FILE_ASK]);
  const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: (level, message) => logs.push(`${level}: ${message}`) }, grants: { file, mode: 'deny' }, engineIdleMs: 0 });
  return { registry, file, root, slow };
}

function changeOf(registry: ModuleRegistry, name: string, kind: string): Promise<void> {
  return new Promise((resolve) => {
    const stop = registry.onChange((c) => {
      if (c.name === name && c.change === kind) {
        stop();
        resolve();
      }
    });
  });
}

const read = (registry: ModuleRegistry): Promise<unknown> =>
  registry.get('notes')?.invokeTool({ name: 'read', argumentsJson: 'note.txt', callId: 'r' }) ?? Promise.resolve('unloaded');

after(() => {
  for (const scratch of scratches) rmSync(scratch, { recursive: true, force: true });
});

describe('a grant taken out of the grants file', () => {
  it('right after the module is served, before the poll first looks at the file, still unloads it', { timeout: 180_000 }, async () => {
    const { registry, file, root } = await servedNotes();
    // Served, the gate starts its poll: thread-pool jobs queued now run before the poll's first stat.
    const busy: Promise<void>[] = [];
    const stop = registry.onChange((c) => {
      if (c.change !== 'served') return;
      stop();
      for (let i = 0; i < 16; i++) busy.push(new Promise((resolve) => pbkdf2('x', 'y', 40_000, 32, 'sha256', () => resolve())));
    });
    const unloaded = changeOf(registry, 'notes', 'unloaded');
    await registry.scanDirectory(root);
    writeFileSync(`${file}.edit`, JSON.stringify({ version: 1, grants: [] }), { mode: 0o600 });
    renameSync(`${file}.edit`, file);
    await Promise.all(busy);
    await unloaded; // before: never (the test times out)
    assert.equal(await read(registry), 'unloaded');
    await registry.close();
  });

  for (const [how, write] of [
    ['written group-writable (umask 002: 0664)', (file: string): void => {
      writeFileSync(`${file}.edit`, JSON.stringify({ version: 1, grants: [] }));
      chmodSync(`${file}.edit`, 0o664);
      renameSync(`${file}.edit`, file);
    }],
    ['deleted leaving a trailing comma', (file: string): void => writeFileSync(file, '{"version":1,"grants":[\n],}', { mode: 0o600 })],
  ] as const) {
    it(`by a file then refused (${how}) unloads it (fail closed), and it is served again once the file reads and grants it`, { timeout: 180_000 }, async () => {
      const logs: string[] = [];
      const { registry, file, root, slow } = await servedNotes(logs);
      await registry.scanDirectory(root);
      assert.deepEqual(await read(registry), { ok: true, value: { content: 'secret note', usage: undefined } });
      const unloaded = changeOf(registry, 'notes', 'unloaded');
      write(file);
      await unloaded; // before: it kept reading files, with a warning
      assert.equal(await read(registry), 'unloaded');
      const pending = registry.pending().find((p) => p.name === 'notes');
      assert.equal(pending?.state, 'ungranted');
      assert.match(pending!.reason!, /^not granted: the grants file can no longer be read, so its grant of file \(read files under \.\/data\) for component sha256:[0-9a-f]{12}… is not held; /);
      assert.ok(logs.some((l) => l.startsWith('warn: unloaded: not granted: the grants file can no longer be read')), logs.join('\n'));
      assert.ok(logs.some((l) => /warn: grants file .* (is writable by its group|is not valid JSON)/.test(l)), logs.join('\n'));

      // The file repaired, still granting it: served again.
      const served = changeOf(registry, 'notes', 'served');
      rmSync(file);
      new GrantsFile(file).remember('notes', componentDigest(slow), [FILE_ASK]);
      await served;
      assert.deepEqual(await read(registry), { ok: true, value: { content: 'secret note', usage: undefined } });
      await registry.close();
    });
  }
});
