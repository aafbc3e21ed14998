/**
 * The examples' build folder is trusted (a lock entry pinned to sources pre-grants what is built
 * there), so ensureExamplesBuilt judges it as owner-only judges a trusted folder: the modules
 * folder is a folder of this user's (not a link), writable by nobody else, and so is every folder
 * above it. It refuses otherwise and changes no mode. A link at an example's copy is no copy of
 * ours: it is built anew. And the copy is judged before its build stamp is read, which is read
 * never waiting (a FIFO a group member put there while the copy was open does not hold the start).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ensureExamplesBuilt } from '../../main/plugins/build/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'chatty-examples-chain-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Stands in for componentize-js (what is tested is where it builds, not the component). */
const build = async (dir: string): Promise<void> => writeFileSync(join(dir, 'plugin.wasm'), new Uint8Array([0, 0x61, 0x73, 0x6d]), { mode: 0o644 });

function examples(n: string): string {
  const source = join(scratch, `examples-${n}`);
  const ex = join(source, 'text-tools');
  mkdirSync(join(ex, 'src'), { recursive: true });
  writeFileSync(join(ex, 'module.toml'), '[module]\nname = "text-tools"\nversion = "1.0.0"\nwasm = "plugin.wasm"\n[protocols]\nmcp = true\n');
  writeFileSync(join(ex, 'src', 'index.js'), 'export const plugin = {};');
  return source;
}

it("a link at an example's copy (the current stamp inside) is built anew, not kept", async () => {
  const source = examples('a');
  const cacheDir = join(scratch, 'cache-a');
  const modules = await ensureExamplesBuilt(source, { cacheDir, build });
  const elsewhere = join(scratch, 'elsewhere-a');
  cpSync(join(modules, 'text-tools'), elsewhere, { recursive: true });
  writeFileSync(join(elsewhere, 'plugin.wasm'), 'another component');
  rmSync(join(modules, 'text-tools'), { recursive: true });
  symlinkSync(elsewhere, join(modules, 'text-tools'));
  let rebuilt = false;
  await ensureExamplesBuilt(source, { cacheDir, build: async (dir) => ((rebuilt = true), build(dir)) });
  assert.ok(rebuilt, 'the link was taken for a built copy');
  assert.ok(lstatSync(join(modules, 'text-tools')).isDirectory(), 'the link is still there');
});

it('a modules folder that is a link is refused, and nothing is built through it', async () => {
  const source = examples('b');
  const cacheDir = join(scratch, 'cache-b');
  mkdirSync(cacheDir, { mode: 0o700 });
  const elsewhere = join(scratch, 'elsewhere-b');
  mkdirSync(elsewhere, { mode: 0o755 });
  symlinkSync(elsewhere, join(cacheDir, 'modules'));
  await assert.rejects(ensureExamplesBuilt(source, { cacheDir, build }), /modules is a symbolic link.*not built/);
  assert.throws(() => statSync(join(elsewhere, 'text-tools')), /ENOENT/);
});

it('a modules folder others may write is refused, not closed in place', async () => {
  const source = examples('c');
  const cacheDir = join(scratch, 'cache-c');
  mkdirSync(join(cacheDir, 'modules'), { recursive: true, mode: 0o700 });
  chmodSync(join(cacheDir, 'modules'), 0o775);
  await assert.rejects(ensureExamplesBuilt(source, { cacheDir, build }), /modules is writable by its group.*not built/);
  assert.equal(statSync(join(cacheDir, 'modules')).mode & 0o777, 0o775, 'its mode was changed');
});

it('a folder above the modules folder that others may write is refused', async () => {
  const source = examples('d');
  const cacheDir = join(scratch, 'cache-d');
  mkdirSync(join(cacheDir, 'modules'), { recursive: true, mode: 0o700 });
  chmodSync(cacheDir, 0o777);
  await assert.rejects(ensureExamplesBuilt(source, { cacheDir, build }), /cache-d is writable by others.*not built/);
  assert.equal(statSync(cacheDir).mode & 0o777, 0o777, 'its mode was changed');
});

it("a FIFO at an open copy's .build-stamp does not hold the start: the copy is judged first, and built anew", { timeout: 120_000 }, () => {
  const source = examples('e');
  const cacheDir = join(scratch, 'cache-e');
  mkdirSync(cacheDir, { mode: 0o700 });
  mkdirSync(join(cacheDir, 'modules'), { mode: 0o755 });
  // What an older gateway left under umask 002: the example's copy group-writable.
  const copy = join(cacheDir, 'modules', 'text-tools');
  mkdirSync(copy, { mode: 0o775 });
  chmodSync(copy, 0o775);
  const made = spawnSync('mkfifo', [join(copy, '.build-stamp')]);
  assert.equal(made.status, 0, String(made.stderr));
  const script = `import { ensureExamplesBuilt } from ${JSON.stringify(new URL('../../main/plugins/build/index.ts', import.meta.url).pathname)};
await ensureExamplesBuilt(${JSON.stringify(source)}, { cacheDir: ${JSON.stringify(cacheDir)}, build: async (dir) => (await import('node:fs')).writeFileSync(dir + '/plugin.wasm', 'x') });
process.stdout.write('done');`;
  // A child process: a read blocked on the FIFO would hold this test's own thread for good.
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(child.signal, null, 'ensureExamplesBuilt was still blocked on the FIFO after 60 s');
  assert.equal(child.stdout, 'done', child.stderr);
  assert.ok(lstatSync(join(copy, '.build-stamp')).isFile(), 'the copy was not built anew');
});
