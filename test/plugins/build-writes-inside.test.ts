import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PluginLoadError, buildPlugin } from '../../main/plugins/index.js';

const MINIMAL = `export const plugin = { metadata() {}, listTools() { return []; }, invokeTool() { return { content: '' }; } };\n`;

/**
 * `serve --watch` builds a plugin folder someone planted in the watched folder before anyone is
 * asked anything, and `plugin build` builds whatever folder it is given. The build writes the
 * component where module.toml's `wasm` says, and before it a file beside it: neither may be
 * written through a link out of the plugin folder (a `wasm = "out/plugin.wasm"` with
 * `out -> ~/somewhere`, or a link planted at the name the build writes aside), or a planted
 * folder writes (and clobbers) files anywhere its user can.
 */
describe('plugin build writes only inside the plugin folder', () => {
  let root: string;
  let outside: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'chatty-build-inside-'));
    outside = mkdtempSync(join(tmpdir(), 'chatty-build-outside-'));
  });
  after(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  const plugin = (name: string, wasm: string): string => {
    const dir = join(root, name);
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'module.toml'), `[module]\nname = "${name}"\nversion = "0.1.0"\nwasm = "${wasm}"\n`);
    writeFileSync(join(dir, 'src', 'plugin.js'), MINIMAL);
    return dir;
  };

  it("refuses a component whose folder is a link out of the plugin folder, before building", async () => {
    const dir = plugin('linked-out', 'out/plugin.wasm');
    const target = join(outside, 'linked');
    mkdirSync(target);
    symlinkSync(target, join(dir, 'out'));
    await assert.rejects(buildPlugin(dir), (err: unknown) => err instanceof PluginLoadError && /outside the plugin folder/.test(err.message));
    assert.deepEqual(readdirSync(target), [], 'written through the link');
  });

  it('never writes through a link planted where the component is written aside', async () => {
    const dir = plugin('planted-aside', 'plugin.wasm');
    const victim = join(outside, 'notes.txt');
    writeFileSync(victim, 'the user\'s own words\n');
    symlinkSync(victim, join(dir, `plugin.wasm.${process.pid}.tmp`));
    await buildPlugin(dir).catch(() => undefined); // built or refused: either way, nothing outside changes
    const now = readFileSync(victim);
    assert.ok(now.equals(Buffer.from('the user\'s own words\n')), `the planted link was written through: the file outside now holds ${now.length} bytes`);
    assert.ok(existsSync(victim));
  });
});
