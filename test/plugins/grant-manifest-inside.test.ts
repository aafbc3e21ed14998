/**
 * `plugin grant` reads a module's module.toml as serve does (main/plugins/inside-module.ts, one
 * reader for both): a module.toml leading outside its folder, which serve refuses, was read by the
 * command, and the person was shown (and granted) the asks of a manifest serve never reads.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { moduleAsks } from '../../main/plugins/grants/module-asks.js';
import { ModuleRegistry, PluginLoadError } from '../../main/plugins/index.js';
import { TEST_CACHE_DIR, buildFixture } from '../helpers/wasm-fixtures.js';

const scratch = mkdtempSync(join(tmpdir(), 'chatty-grant-manifest-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

it('a module.toml leading outside its folder is refused by plugin grant, as serve refuses it', async () => {
  const mods = join(scratch, 'mods');
  mkdirSync(join(mods, 'notes'), { recursive: true });
  writeFileSync(join(scratch, 'elsewhere.toml'), '[module]\nname = "notes"\nversion = "1.0.0"\nwasm = "plugin.wasm"\n[protocols]\nmcp = true\n[network]\nallow = ["api.example.com:443"]\n');
  symlinkSync(join(scratch, 'elsewhere.toml'), join(mods, 'notes', 'module.toml'));
  writeFileSync(join(mods, 'notes', 'plugin.wasm'), await buildFixture('echo'));
  const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: () => {} }, grants: { file: join(scratch, 'grants.json') } });
  try {
    const scan = await registry.scanDirectory(mods);
    assert.match(scan.failed.map((f) => f.reason).join('; '), /outside the module directory/, 'serve refuses it');
  } finally {
    await registry.close();
  }
  // Not found: a manifest serve cannot read names no module, as a broken neighbour names none.
  await assert.rejects(
    (async () => moduleAsks(mods, 'notes'))(),
    (err: unknown) => err instanceof PluginLoadError && /no module named "notes"/.test(err.message),
  );
});
