/**
 * `chatty-gateway plugin grant NAME` finds NAME among the folders of the modules directory and
 * digests its component (`moduleAsks`). It read every neighbour's module.toml with readFileSync,
 * so a neighbour whose module.toml is a FIFO (a folder a `git pull` brought) held the command
 * forever (and /dev/zero would have grown it to its heap); and it digested the component through
 * any link, so a component leading outside its folder (which serve refuses to load) was granted.
 * Now both are read as serve reads them: never waited on, bounded, and inside the folder.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { moduleAsks } from '../../main/plugins/grants/module-asks.js';
import { PluginLoadError } from '../../main/plugins/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'chatty-grant-reads-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const manifest = (name: string): string => `[module]\nname = "${name}"\nversion = "1.0.0"\nwasm = "plugin.wasm"\n[protocols]\nmcp = true\n`;

it("a neighbour whose module.toml is a FIFO is passed over, not waited on", () => {
  const mods = join(scratch, 'fifo');
  mkdirSync(join(mods, 'a-fifo'), { recursive: true });
  mkdirSync(join(mods, 'notes'));
  const made = spawnSync('mkfifo', [join(mods, 'a-fifo', 'module.toml')]);
  assert.equal(made.status, 0, String(made.stderr));
  writeFileSync(join(mods, 'notes', 'module.toml'), manifest('notes'));
  writeFileSync(join(mods, 'notes', 'plugin.wasm'), 'a component');
  // In a child process: the old read blocks its thread for good, so only a child can be stopped.
  const script = `import { moduleAsks } from ${JSON.stringify(new URL('../../main/plugins/grants/module-asks.ts', import.meta.url).href)};\nprocess.stdout.write((await moduleAsks(${JSON.stringify(mods)}, 'notes')).name);`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(child.signal, null, 'the command was still waiting on the FIFO after a minute');
  assert.equal(child.stdout, 'notes', child.stderr);
});

it('a component leading outside its module folder is not granted (serve refuses to load it)', async () => {
  const mods = join(scratch, 'outside');
  mkdirSync(join(mods, 'notes'), { recursive: true });
  writeFileSync(join(scratch, 'elsewhere.wasm'), 'not this module');
  writeFileSync(join(mods, 'notes', 'module.toml'), manifest('notes'));
  symlinkSync(join(scratch, 'elsewhere.wasm'), join(mods, 'notes', 'plugin.wasm'));
  await assert.rejects(moduleAsks(mods, 'notes'), (err: unknown) => err instanceof PluginLoadError && /outside the module directory/.test(err.message));
});

it('a component linked inside its folder is digested as serve digests it', async () => {
  const mods = join(scratch, 'inside');
  mkdirSync(join(mods, 'notes', 'build'), { recursive: true });
  writeFileSync(join(mods, 'notes', 'build', 'out.wasm'), 'a component');
  writeFileSync(join(mods, 'notes', 'module.toml'), manifest('notes'));
  symlinkSync(join('build', 'out.wasm'), join(mods, 'notes', 'plugin.wasm'));
  assert.match((await moduleAsks(mods, 'notes')).digest, /^sha256:[0-9a-f]{64}$/);
});
