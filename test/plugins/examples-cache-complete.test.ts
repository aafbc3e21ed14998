/**
 * A built example is used as it is only when the copy is still what was built: its stamp alone
 * (current sources, WIT, wrapper, componentize-js) said nothing about the copy beside it. A copy
 * whose component went missing (a cache cleaner, an interrupted `rm`), whose component was cut
 * short, or whose source lost a file was kept at every start: the example was never served again
 * ('component missing'), or served what no build made, until the user found and removed the cache.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ensureExamplesBuilt } from '../../main/plugins/build/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'chatty-examples-complete-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const COMPONENT = [0, 0x61, 0x73, 0x6d, 0x0d, 0, 1, 0];
/** Stands in for componentize-js (what is tested is whether the cache is trusted, not the component). */
const build = async (dir: string): Promise<void> => writeFileSync(join(dir, 'plugin.wasm'), new Uint8Array(COMPONENT), { mode: 0o644 });

/** text-tools built once into a cache of its own; `rebuilds()` counts the builds after that. */
async function builtOnce(n: string): Promise<{ copy: string; rebuilds: () => Promise<number> }> {
  const source = join(scratch, `examples-${n}`);
  const ex = join(source, 'text-tools');
  mkdirSync(join(ex, 'src'), { recursive: true });
  writeFileSync(join(ex, 'module.toml'), '[module]\nname = "text-tools"\nversion = "1.0.0"\nwasm = "plugin.wasm"\n[protocols]\nmcp = true\n');
  writeFileSync(join(ex, 'src', 'index.js'), "import { x } from './lib.js';\nexport const plugin = { x };");
  writeFileSync(join(ex, 'src', 'lib.js'), 'export const x = 1;');
  const cacheDir = join(scratch, `cache-${n}`);
  const modules = await ensureExamplesBuilt(source, { cacheDir, build });
  return {
    copy: join(modules, 'text-tools'),
    rebuilds: async () => {
      let builds = 0;
      await ensureExamplesBuilt(source, { cacheDir, build: async (dir) => ((builds += 1), build(dir)) });
      return builds;
    },
  };
}

it('a current copy left as it was built is not built again', async () => {
  const { rebuilds } = await builtOnce('kept');
  assert.equal(await rebuilds(), 0);
});

it('a copy whose component went missing is built anew (its stamp still current)', async () => {
  const { copy, rebuilds } = await builtOnce('missing');
  rmSync(join(copy, 'plugin.wasm'));
  assert.equal(await rebuilds(), 1, 'kept a copy with no component: the example would never be served again');
  assert.deepEqual([...readFileSync(join(copy, 'plugin.wasm'))], COMPONENT);
  assert.equal(await rebuilds(), 0, 'built anew, it is kept at the next start');
});

it('a copy whose component was cut short is built anew', async () => {
  const { copy, rebuilds } = await builtOnce('short');
  truncateSync(join(copy, 'plugin.wasm'), 3);
  assert.equal(await rebuilds(), 1, 'kept a component no build made');
});

it('a copy whose sources lost a file (or changed) is built anew', async () => {
  const { copy, rebuilds } = await builtOnce('sources');
  rmSync(join(copy, 'src', 'lib.js'));
  assert.equal(await rebuilds(), 1, 'kept a copy whose sources no longer hash to its stamp');
  writeFileSync(join(copy, 'src', 'lib.js'), 'export const x = 2;');
  assert.equal(await rebuilds(), 1, 'kept a copy whose source was edited');
});

it('a copy whose file lost its bytes to the one before it (names and bytes run together) is built anew', async () => {
  const { copy, rebuilds } = await builtOnce('framing');
  // The digest hashes name \0 bytes name \0 bytes ... with nothing saying where a file's bytes end:
  // src/lib.js removed and its name and bytes appended to src/index.js hash the same.
  rmSync(join(copy, 'src', 'lib.js'));
  appendFileSync(join(copy, 'src', 'index.js'), 'src/lib.js\0export const x = 1;');
  assert.equal(await rebuilds(), 1, 'kept a copy that lost a source file (and whose index.js was altered)');
});

it('a copy holding a file over 2 GiB is built anew, not a failed start', async () => {
  const { copy, rebuilds } = await builtOnce('huge');
  mkdirSync(join(copy, 'data'), { recursive: true });
  writeFileSync(join(copy, 'data', 'huge.bin'), '');
  truncateSync(join(copy, 'data', 'huge.bin'), 2 ** 31 + 1); // sparse: nothing written
  assert.equal(await rebuilds(), 1);
});

it('a link or a file added to the copy is built anew', async () => {
  const { copy, rebuilds } = await builtOnce('added');
  symlinkSync('/etc/passwd', join(copy, 'src', 'extra.js'));
  assert.equal(await rebuilds(), 1, 'kept a copy with a link added');
  writeFileSync(join(copy, 'src', 'added.js'), '');
  assert.equal(await rebuilds(), 1, 'kept a copy with an empty file added');
});
