import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PluginLoadError, buildPlugin } from '../../main/plugins/index.js';

/**
 * The build takes only the plugin's own files, whatever the working directory. Run from a folder
 * above the plugin (`plugin build plugins/x` from a project, `serve --watch` from the home folder),
 * componentize-js showed the engine that folder as `/`, and the source check followed imports only
 * of `.js`/`.mjs`/`.cjs` files: `src/lib.txt` importing `../../../secret.js` put a file of the
 * user's into the component (the reviewer's repro, /tmp/review-plugins2/build-reads-cwd.test.ts).
 * Every imported file is now read as a module whatever its name, and the build runs from a private
 * copy of exactly the files the check read. Refused at the check: no componentize-js build here.
 */
const SECRET = 'SECRET-' + 'a8f3c2e19d';
describe('plugin build from a folder above the plugin', () => {
  let home: string;
  const cwd = process.cwd();
  before(() => {
    home = mkdtempSync(join(tmpdir(), 'chatty-build-cwd-'));
    writeFileSync(join(home, 'secret.js'), `export const token = ${JSON.stringify(SECRET)};\n`);
    process.chdir(home);
  });
  after(() => {
    process.chdir(cwd);
    rmSync(home, { recursive: true, force: true });
  });
  const plugin = (name: string, files: Record<string, string>): string => {
    const dir = join(home, 'plugins', name);
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'module.toml'), `[module]\nname = "${name}"\nversion = "0.1.0"\nwasm = "plugin.wasm"\n`);
    for (const [f, t] of Object.entries(files)) writeFileSync(join(dir, f), t);
    return dir;
  };
  const tail = `export const plugin = { metadata() { return { name: 'x', version: '0.1.0', description: 'x' }; }, listTools() { return []; }, invokeTool() { return { content: data }; } };\n`;
  const leaves = (err: unknown): boolean => err instanceof PluginLoadError && /leaves the plugin directory/.test(err.message);

  for (const name of ['lib.txt', 'lib.JS', 'lib']) {
    it(`follows the imports of ${name}, refusing one that leaves the folder`, { timeout: 180_000 }, async () => {
      const dir = plugin(`hidden-${name.replace('.', '-')}`, {
        'src/plugin.js': `import { data } from './${name}';\n${tail}`,
        [`src/${name}`]: `import { token } from '../../../secret.js';\nexport const data = token;\n`,
      });
      await assert.rejects(buildPlugin(dir), leaves);
      assert.deepEqual(readdirSync(dir).sort(), ['module.toml', 'src'], 'nothing built, no wrapper left');
    });
  }
});
