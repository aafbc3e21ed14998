import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry, PluginLoadError } from '../../main/plugins/index.js';
import { TEST_CACHE_DIR, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';
import { listedToolsComponent, type ListedTool } from './listed-tools-component.js';

/**
 * A plugin names its own tools, and an MCP client's model picks a tool by its name alone. A
 * hostile plugin's `list-tools` answering the same name twice (which one runs?), names that
 * differ only in case, a Cyrillic look-alike of an ASCII name, bidi controls, spaces, an empty or
 * a 10,000-character name must be refused at load, naming the tool, as MCP's tool-name rule
 * (1–128 of A–Z a–z 0–9 _ - .) asks; a plugin keeping to it is served as before.
 */
describe('tool names a plugin lists', () => {
  let root: string;
  let registry: ModuleRegistry;
  let n = 0;

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'chatty-tool-names-'));
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: () => {} } });
  });
  after(async () => {
    await registry.close();
    rmSync(root, { recursive: true, force: true });
  });

  const load = async (tools: readonly ListedTool[]) => {
    const name = `listed-${n++}`;
    const dir = writeModuleDir(root, name, { manifest: fixtureManifest(name), component: await listedToolsComponent(tools) });
    return { name, loaded: registry.loadModule(dir) };
  };
  const refusal = async (tools: readonly ListedTool[]): Promise<string> => {
    const { name, loaded } = await load(tools);
    const err = await loaded.then(
      () => assert.fail(`${JSON.stringify(tools.map((t) => t.name))} was served`),
      (e: unknown) => e,
    );
    assert.ok(err instanceof PluginLoadError, String(err));
    assert.equal(registry.get(name), undefined);
    return err.message;
  };

  it('serves names of letters, digits, _ - . up to 128 characters', async () => {
    const names = ['greet', 'Read_File-2.v1', 'x'.repeat(128)];
    const { name, loaded } = await load(names.map((t) => ({ name: t })));
    await loaded;
    assert.deepEqual((await registry.get(name)!.listTools()).map((t) => t.name), names);
  });

  it('refuses two tools of the same name', async () => {
    assert.match(await refusal([{ name: 'greet' }, { name: 'greet', description: 'the other one' }]), /tool 'greet' is listed twice/);
  });

  it('refuses two names that differ only in case', async () => {
    assert.match(await refusal([{ name: 'delete_file' }, { name: 'Delete_File' }]), /tools 'delete_file' and 'Delete_File' differ only in case/);
  });

  it('refuses names that differ only in - _ . or in 0/O or 1/l/I (review r2 F8: one plugin served delete_file, delete-file, de1ete_fi1e, rm_O0 and rm_0O)', async () => {
    const alike = /tools '(.+)' and '(.+)' differ only in case or look-alike characters \(- _ \. alike, 0 O alike, 1 l I alike\)/;
    for (const [a, b] of [['delete_file', 'delete-file'], ['delete_file', 'delete.file'], ['delete_file', 'de1ete_fi1e'], ['delete_file', 'deIete_fiIe'], ['rm_O0', 'rm_0O']]) {
      assert.match(await refusal([{ name: a! }, { name: b! }]), alike);
    }
  });

  it('refuses a look-alike letter, a bidi control, a space, a control character, an empty or an overlong name', async () => {
    assert.match(await refusal([{ name: 'gr\u0435et' }]), /tool "gr\\u0435et": a tool name is 1–128 of A–Z a–z 0–9 _ - \./);
    assert.match(await refusal([{ name: 'safe\u202etxt.exe' }]), /tool "safe\\u202etxt\.exe": a tool name is/);
    assert.match(await refusal([{ name: 'read file' }]), /tool "read file": a tool name is/);
    assert.match(await refusal([{ name: 'a\nb' }]), /tool "a\\nb": a tool name is/);
    assert.match(await refusal([{ name: '' }]), /tool "": a tool name is/);
    const long = await refusal([{ name: 'y'.repeat(5000) }]);
    assert.match(long, /a tool name is 1–128/);
    assert.ok(long.length < 400, `the refusal quotes the whole name: ${long.length} characters`);
  });
});
