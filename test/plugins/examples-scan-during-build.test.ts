/**
 * A gateway scans the examples' `modules/` folder whole (`openModules`, `scanDirectory`). Other
 * gateways' builds in progress (`<name>.tmp-<pid>`) and copies being removed
 * (`<name>.old-<pid>-<hex>`) lay in it, kept by the sweep while their process ran, and the scan
 * claimed the example's name from them: it served a folder about to be renamed or removed, and
 * the example this gateway then built was refused ("duplicate module name 'far' (already loaded
 * from …/far.tmp-27716)"). They now lie in `<cache>/building/`, beside it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, it } from 'node:test';
import { ensureExamplesBuilt } from '../../main/plugins/build/index.js';
import { ModuleRegistry } from '../../main/plugins/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'chatty-examples-scan-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A remote example: the scan claims its name from its module.toml alone (no component to load). */
function remoteExample(source: string, name: string): void {
  mkdirSync(join(source, name, 'src'), { recursive: true });
  writeFileSync(join(source, name, 'module.toml'), `[module]\nname = "${name}"\nversion = "1.0.0"\nexecution_mode = "remote"\n[protocols]\na2a = true\n`);
  writeFileSync(join(source, name, 'src', 'index.js'), 'export const plugin = {};');
}

it("another gateway scanning the modules folder while this one builds finds nothing of the build there", { timeout: 180_000 }, async () => {
  const source = join(scratch, 'examples');
  remoteExample(source, 'far');
  const cacheDir = join(scratch, 'cache');
  const modulesDir = join(cacheDir, 'modules');
  const seen: { building: string; scanned: string[] }[] = [];
  // The other gateway's scan runs while the build folder holds a finished build, just before its rename.
  const build = async (dir: string): Promise<void> => {
    writeFileSync(join(dir, 'plugin.wasm'), new Uint8Array([0, 0x61, 0x73, 0x6d]), { mode: 0o644 });
    const other = new ModuleRegistry({ cacheDir: join(scratch, 'other-cache'), logger: { log: () => {} } });
    try {
      const scan = await other.scanDirectory(modulesDir);
      seen.push({ building: dir, scanned: [...scan.remote.map((r) => r.dir), ...scan.loaded.map((l) => l.dir), ...scan.failed.map((f) => f.dir)] });
    } finally {
      await other.close();
    }
  };
  await ensureExamplesBuilt(source, { cacheDir, build });
  assert.equal(seen.length, 1);
  assert.deepEqual(seen[0]!.scanned, [], `the other gateway's scan of ${modulesDir} found ${seen[0]!.building}`);
  assert.notEqual(dirname(seen[0]!.building), modulesDir);
  assert.deepEqual(readdirSync(modulesDir), ['far']);
});

it("the building folder keeps another running gateway's build and sweeps a dead one's", { timeout: 180_000 }, async () => {
  const source = join(scratch, 'examples-2');
  remoteExample(source, 'far');
  const cacheDir = join(scratch, 'cache-2');
  await ensureExamplesBuilt(source, { cacheDir, build: async (dir) => writeFileSync(join(dir, 'plugin.wasm'), 'x') });
  const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  try {
    const theirs = join(cacheDir, 'building', `far.tmp-${other.pid}`);
    const removing = join(cacheDir, 'building', `far.old-${other.pid}-0a1b2c3d`);
    const dead = join(cacheDir, 'building', `far.tmp-${2 ** 22 + 1}`);
    for (const d of [theirs, removing, dead]) mkdirSync(d, { mode: 0o700 });
    await ensureExamplesBuilt(source, { cacheDir, build: async (dir) => writeFileSync(join(dir, 'plugin.wasm'), 'x') });
    assert.deepEqual([existsSync(theirs), existsSync(removing), existsSync(dead)], [true, true, false]);
  } finally {
    other.kill('SIGKILL');
  }
});
