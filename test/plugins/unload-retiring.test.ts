/**
 * `unload(name)` (no `finishCalls`) stops a module now: its worker stops and its calls reject
 * `unloaded`. But only the instance the name served was closed: an instance an earlier reload
 * retired, still finishing a call, ran on after the unload (a 20 s call answered long after the
 * person unloaded the plugin; its network requests, its provider calls with it). Now an unload
 * closes every instance of the name, retiring ones included.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ModuleRegistry, PluginCallError } from '../../main/plugins/index.js';
import { running } from '../helpers/running-call.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

const scratch = mkdtempSync(join(tmpdir(), 'chatty-unload-retiring-'));
const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: () => {} }, engineIdleMs: 0 });
after(async () => {
  await registry.close();
  rmSync(scratch, { recursive: true, force: true });
});

it("an unload ends the calls of the instances earlier reloads retired, not only the served one's", { timeout: 180_000 }, async () => {
  const root = join(scratch, 'modules');
  writeModuleDir(root, 'notes', { manifest: fixtureManifest('notes'), component: await buildFixture('slow') });
  assert.deepEqual((await registry.scanDirectory(root)).loaded.map((l) => l.name), ['notes']);
  const old = registry.get('notes')!;
  const outcome = old.invokeTool({ name: 'slow', argumentsJson: '20000', callId: 's1' }).then(() => 'answered', (err: unknown) => err);
  await running(old, 's1', outcome);
  await registry.reload('notes'); // the old instance retires, finishing its 20 s call
  assert.notEqual(registry.get('notes'), old);
  assert.equal(await registry.unload('notes'), true);
  const err = await outcome;
  assert.ok(err instanceof PluginCallError && err.kind === 'unloaded', `the retired instance's call after the unload: ${String(err)}`);
});
