/**
 * ensureExamplesBuilt closes the built copy of an example to others all the way down. A checkout
 * made under umask 002 has 0775 folders and 0664 files, and the copy keeps them: json-tools' data/
 * (the folder its lock entry grants reading), module.toml and src/ would stay writable by the
 * group after the lock pre-granted them. An example an older gateway built (stamp current) and
 * left open is built anew, not closed in place: a group member may have rewritten its component
 * while it was open, and closing it would make the lock vouch for that (grants/store.ts `builtByUs`
 * trusts a component by the modes it finds). The build itself runs in a folder only this user can
 * reach.
 */
import assert from 'node:assert/strict';
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ensureExamplesBuilt } from '../../main/plugins/build/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'chatty-examples-modes-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Stands in for componentize-js (what is tested is the copy's modes, not the component). */
const build = async (dir: string): Promise<void> => writeFileSync(join(dir, 'plugin.wasm'), new Uint8Array([0, 0x61, 0x73, 0x6d]), { mode: 0o644 });

/** Every path under `root` (itself included) that its group or others may write, with its mode. */
function openToOthers(root: string, shown: string): string[] {
  const st = lstatSync(root);
  const open = (st.mode & 0o022) !== 0 && !st.isSymbolicLink() ? [`${shown} ${(st.mode & 0o777).toString(8)}`] : [];
  if (!st.isDirectory()) return open;
  return [...open, ...readdirSync(root).flatMap((e) => openToOthers(join(root, e), `${shown}/${e}`))];
}

it('leaves nothing in a built example writable by the group, however the checkout was made', async () => {
  const source = join(scratch, 'examples');
  const ex = join(source, 'json-tools');
  mkdirSync(join(ex, 'data', 'deep'), { recursive: true });
  mkdirSync(join(ex, 'src'), { recursive: true });
  writeFileSync(join(ex, 'module.toml'), '[module]\nname = "json-tools"\nversion = "1.0.0"\nwasm = "plugin.wasm"\n[protocols]\nmcp = true\n[files]\nroot = "data"\n');
  writeFileSync(join(ex, 'data', 'sample.json'), '{}');
  writeFileSync(join(ex, 'data', 'deep', 'other.json'), '{}');
  writeFileSync(join(ex, 'src', 'index.js'), 'export const plugin = {};');
  // As a checkout under umask 002 leaves them (and one world-writable file).
  for (const d of [ex, join(ex, 'data'), join(ex, 'data', 'deep'), join(ex, 'src')]) chmodSync(d, 0o775);
  for (const f of ['module.toml', 'data/sample.json', 'src/index.js']) chmodSync(join(ex, f), 0o664);
  chmodSync(join(ex, 'data', 'deep', 'other.json'), 0o666);

  // And built under umask 002 (the copy, the stamp): whatever the umask, the copy ends closed.
  const umask = process.umask(0o002);
  let modules: string;
  try {
    modules = await ensureExamplesBuilt(source, { cacheDir: join(scratch, 'cache'), build });
  } finally {
    process.umask(umask);
  }
  assert.deepEqual(openToOthers(join(modules, 'json-tools'), 'json-tools'), [], 'writable by others in the built copy the lock pre-grants');
  assert.equal(lstatSync(join(modules, 'json-tools', 'src', 'index.js')).mode & 0o777, 0o644, 'only the write bits are taken off');
  assert.equal(lstatSync(join(modules, 'json-tools', 'data')).mode & 0o777, 0o755);
});

/** A text-tools example built once into a cache of its own (`n` tells the tests' folders apart). */
async function builtTextTools(n: string): Promise<{ source: string; options: { cacheDir: string; build: typeof build }; modules: string }> {
  const source = join(scratch, `examples${n}`);
  const ex = join(source, 'text-tools');
  mkdirSync(join(ex, 'src'), { recursive: true });
  writeFileSync(join(ex, 'module.toml'), '[module]\nname = "text-tools"\nversion = "1.0.0"\nwasm = "plugin.wasm"\n[protocols]\nmcp = true\n');
  writeFileSync(join(ex, 'src', 'index.js'), 'export const plugin = {};');
  const options = { cacheDir: join(scratch, `cache${n}`), build };
  return { source, options, modules: await ensureExamplesBuilt(source, options) };
}

it('builds anew an example an older gateway left open (stamp current): closing it in place would vouch for what a group member wrote meanwhile', async () => {
  const { source, options, modules } = await builtTextTools('2');
  // What a build before cdaa101 under umask 002 left: the copy group-writable, its stamp current.
  chmodSync(join(modules, 'text-tools'), 0o775);
  chmodSync(join(modules, 'text-tools', 'src'), 0o775);
  chmodSync(join(modules, 'text-tools', 'plugin.wasm'), 0o664);
  chmodSync(join(modules, 'text-tools', 'module.toml'), 0o666);
  // A group member rewrites the component (the file stays this user's: only its bytes change).
  writeFileSync(join(modules, 'text-tools', 'plugin.wasm'), 'not what was built');
  let rebuilt = false;
  await ensureExamplesBuilt(source, { ...options, build: async (dir) => ((rebuilt = true), build(dir)) });
  assert.equal(rebuilt, true, 'a copy others could write is not trusted, current stamp or not');
  assert.deepEqual([...readFileSync(join(modules, 'text-tools', 'plugin.wasm'))], [0, 0x61, 0x73, 0x6d], "the group member's component was kept");
  assert.deepEqual(openToOthers(join(modules, 'text-tools'), 'text-tools'), []);
  // Closed now, it is used as it is at the next start.
  rebuilt = false;
  await ensureExamplesBuilt(source, { ...options, build: async (dir) => ((rebuilt = true), build(dir)) });
  assert.equal(rebuilt, false, 'a closed current copy is not rebuilt');
});

it('builds in a folder nobody else can reach, whatever the modes of the checkout', async () => {
  const source = join(scratch, 'examples4');
  const ex = join(source, 'text-tools');
  mkdirSync(join(ex, 'src'), { recursive: true });
  writeFileSync(join(ex, 'module.toml'), '[module]\nname = "text-tools"\nversion = "1.0.0"\nwasm = "plugin.wasm"\n[protocols]\nmcp = true\n');
  writeFileSync(join(ex, 'src', 'index.js'), 'export const plugin = {};');
  chmodSync(ex, 0o775); // a umask-002 checkout: the copy took this mode while componentize-js ran (20-70 s)
  let whileBuilding: number | undefined;
  await ensureExamplesBuilt(source, { cacheDir: join(scratch, 'cache4'), build: async (dir) => ((whileBuilding = lstatSync(dir).mode & 0o777), build(dir)) });
  assert.equal(whileBuilding! & 0o077, 0, `the folder being built was ${whileBuilding!.toString(8)}: a group member could rewrite its files before they were closed`);
});

it("builds anew an example whose current build holds another user's file (it cannot be closed)", { skip: process.getuid?.() !== 0 && 'needs root to chown' }, async () => {
  const { source, options, modules } = await builtTextTools('3');
  chownSync(join(modules, 'text-tools', 'plugin.wasm'), 4242, 4242); // put there by someone else
  let rebuilt = false;
  await ensureExamplesBuilt(source, { ...options, build: async (dir) => ((rebuilt = true), build(dir)) });
  assert.equal(rebuilt, true);
  assert.equal(lstatSync(join(modules, 'text-tools', 'plugin.wasm')).uid, 0);
  assert.deepEqual(openToOthers(join(modules, 'text-tools'), 'text-tools'), []);
});
