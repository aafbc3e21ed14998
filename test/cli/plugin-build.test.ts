/** `chatty-gateway plugin build <dir>` on a directory it cannot build: one line on stderr, exit 1, before componentize-js. */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { outsideAnyPackage, runCli } from '../helpers/cli.js';

const home = outsideAnyPackage('chatty-plugin-build-');
after(() => home.remove());

async function build(dir: string): Promise<string> {
  const result = await runCli(['plugin', 'build', dir], { cwd: home.path });
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.stdout, '');
  assert.equal(result.stderr.split('\n').length, 2, `one line:\n${result.stderr}`);
  return result.stderr;
}

test('plugin build /nonexistent: one line saying it does not exist, no "building" line', async () => {
  assert.equal(
    await build('/nonexistent'),
    'chatty-gateway plugin build: /nonexistent does not exist (a plugin directory holds module.toml; start one with `npx chatty-gateway plugin new <name>`)\n',
  );
});

test('a file, or a folder with no module.toml: one line each', async () => {
  writeFileSync(join(home.path, 'notes.txt'), 'x');
  assert.equal(await build('notes.txt'), `chatty-gateway plugin build: ${join(home.path, 'notes.txt')} is not a directory (give the plugin directory, the one with module.toml)\n`);
  mkdirSync(join(home.path, 'empty'));
  assert.equal(
    await build('empty'),
    `chatty-gateway plugin build: ${join(home.path, 'empty')} has no module.toml: it is not a plugin directory (start one with \`npx chatty-gateway plugin new <name>\`)\n`,
  );
});

test('a module.toml that is not TOML: its line and column', async () => {
  const dir = join(home.path, 'bad-toml');
  mkdirSync(dir);
  writeFileSync(join(dir, 'module.toml'), '[module]\nname = "bad-toml"\nversion = 1.0.0\n');
  assert.equal(await build(dir), 'chatty-gateway plugin build: module.toml:3:14: not valid TOML: illegal character in numeric literal\n');
});
