import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PluginLoadError, buildPlugin } from '../../main/plugins/index.js';

/**
 * The build takes only the plugin's own files: `serve --watch` builds a folder someone planted,
 * and a plugin asking for no capability is served without anyone being asked. An import (or the
 * plugin file itself) that is a link out of the folder (`data.json -> ~/.docker/config.json`)
 * passed the check by its path and would be read into the component, then answered to any
 * client; it is refused before componentize-js runs.
 */
describe('plugin build reads only inside the plugin folder', () => {
  let root: string;
  let outside: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'chatty-build-reads-'));
    outside = mkdtempSync(join(tmpdir(), 'chatty-build-secret-'));
    writeFileSync(join(outside, 'creds.json'), '{"token":"the user\'s"}\n');
    writeFileSync(join(outside, 'plugin.js'), `export const plugin = { metadata() {}, listTools() { return []; }, invokeTool() { return { content: '' }; } };\n`);
  });
  after(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  const plugin = (name: string): string => {
    const dir = join(root, name);
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'module.toml'), `[module]\nname = "${name}"\nversion = "0.1.0"\nwasm = "plugin.wasm"\n`);
    return dir;
  };
  const refusedAsLink = (err: unknown) => err instanceof PluginLoadError && /is a link that leads out of the plugin directory/.test(err.message);

  it('refuses an import that is a link out of the folder', async () => {
    const dir = plugin('linked-import');
    symlinkSync(join(outside, 'creds.json'), join(dir, 'src', 'data.json'));
    writeFileSync(join(dir, 'src', 'plugin.js'), `import data from './data.json' with { type: 'json' };\nexport const plugin = { metadata() {}, listTools() { return []; }, invokeTool() { return { content: JSON.stringify(data) }; } };\n`);
    await assert.rejects(buildPlugin(dir), refusedAsLink);
  });

  it('refuses a plugin file that is a link out of the folder', async () => {
    const dir = plugin('linked-entry');
    symlinkSync(join(outside, 'plugin.js'), join(dir, 'src', 'plugin.js'));
    await assert.rejects(buildPlugin(dir), refusedAsLink);
  });
});
