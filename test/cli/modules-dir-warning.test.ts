// `serve --modules-dir DIR` where DIR is a plugin itself, or holds no plugin: serving goes on,
// with a warning that says what --modules-dir takes.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { collect, exited, firstLine, outsideAnyPackage, spawnCli } from '../helpers/cli.js';
import { buildFixture, writeModuleDir } from '../helpers/wasm-fixtures.js';

const home = outsideAnyPackage();
let pluginDir: string;
before(async () => {
  pluginDir = writeModuleDir(join(home.path, 'plugins'), 'echo', { component: await buildFixture('echo') });
  mkdirSync(join(home.path, 'nothing-here', 'src'), { recursive: true });
});
after(() => home.remove());

/** Serves with `--modules-dir dir` until the ready line, stops, and gives stderr and the module count. */
async function serveOnce(dir: string): Promise<{ stderr: string; banner: string }> {
  const child = spawnCli(['serve', '--runtime-dir', 'run', '--modules-dir', dir], process.env, home.path);
  const stderr = collect(child.stderr);
  const banner = await firstLine(child);
  child.kill('SIGTERM');
  assert.equal((await exited(child)).code, 0);
  return { stderr: await stderr, banner };
}

test('a plugin directory itself: the warning names the folder to give instead', async () => {
  const { stderr, banner } = await serveOnce('plugins/echo');
  assert.equal(banner, 'chatty-gateway: serving 0 modules');
  assert.equal(
    stderr,
    `chatty-gateway: warning: --modules-dir takes the folder that holds plugin directories; ${pluginDir} is a plugin itself ` +
      `(it has module.toml): try --modules-dir ${join(home.path, 'plugins')}\n`,
  );
});

test('a folder with no plugin directory in it: the warning says so', async () => {
  const { stderr, banner } = await serveOnce('nothing-here');
  assert.equal(banner, 'chatty-gateway: serving 0 modules');
  assert.equal(
    stderr,
    `chatty-gateway: warning: --modules-dir takes the folder that holds plugin directories (each with a module.toml); ${join(home.path, 'nothing-here')} holds none\n`,
  );
});

test('the folder that holds plugins: no warning', async () => {
  const { stderr, banner } = await serveOnce('plugins');
  assert.equal(banner, 'chatty-gateway: serving 1 module');
  assert.equal(stderr, '');
});
