// What `plugin new` gives a user, through the real bin in a directory with no package.json above
// it: a `.gitignore` that keeps the built component out of git, and a README whose commands run
// as printed from the plugin's directory. No componentize-js build here: the printed build
// command is run on a source with a syntax error, which the build refuses before componentize-js
// starts (so `.` is shown to name the plugin and its file), and a prebuilt component stands in for
// its output when the printed serve command runs. A real build of a new plugin, through the bin,
// is test/cli/plugin-new.test.ts's (one ~20 s componentize-js build covers the build step for
// every path; it runs from a private copy of the checked files, build-reads-cwd.test.ts).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { collect, exited, outsideAnyPackage, runCli, servedModuleNames, spawnCli } from '../helpers/cli.js';
import { buildFixture } from '../helpers/wasm-fixtures.js';

const home = outsideAnyPackage('chatty-template-');
const plugin = join(home.path, 'hello');
after(() => home.remove());

/** A command as a POSIX shell splits it (comment dropped), without the `npx chatty-gateway` a user's project provides. */
function wordsOf(line: string): string[] {
  const words = execFileSync('sh', ['-c', `printf '%s\\0' ${line}`], { cwd: plugin, encoding: 'utf8' }).split('\0').slice(0, -1);
  assert.deepEqual(words.slice(0, 2), ['npx', 'chatty-gateway'], line);
  return words.slice(2);
}

describe('a plugin made by `chatty-gateway plugin new`', () => {
  let commands: string[] = [];

  before(async () => {
    const created = await runCli(['plugin', 'new', 'hello'], { cwd: home.path });
    assert.equal(created.code, 0, created.stderr);
    const readme = readFileSync(join(plugin, 'README.md'), 'utf8');
    const block = /```sh\n([\s\S]*?)```/.exec(readme);
    assert.ok(block, 'the README has a sh block');
    commands = block[1]!.trim().split('\n');
  });

  it('has a .gitignore that git honours for the built plugin.wasm', () => {
    execFileSync('git', ['init', '-q', plugin]);
    writeFileSync(join(plugin, 'plugin.wasm'), 'built');
    assert.equal(execFileSync('git', ['-C', plugin, 'check-ignore', 'plugin.wasm'], { encoding: 'utf8' }), 'plugin.wasm\n');
    const status = execFileSync('git', ['-C', plugin, 'status', '--porcelain', '--untracked-files=all'], { encoding: 'utf8' });
    assert.doesNotMatch(status, /plugin\.wasm/);
    assert.match(status, /\?\? src\/plugin\.js/);
  });

  it('its README prints a build and a serve command, each starting `npx chatty-gateway`', () => {
    assert.deepEqual(commands.map((line) => wordsOf(line)[0]), ['plugin', 'serve']);
  });

  it('the README\'s build command, run as printed from the plugin, reaches that plugin\'s source (a syntax error, refused before componentize-js)', async () => {
    const source = join(plugin, 'src', 'plugin.js');
    const original = readFileSync(source, 'utf8');
    appendFileSync(source, '\nexport const = 1;\n');
    try {
      const build = await runCli(wordsOf(commands[0]!), { cwd: plugin });
      assert.equal(build.code, 1, build.stdout);
      const line = original.split('\n').length + 1;
      assert.match(build.stderr, new RegExp(`^building \\. with componentize-js…\\nchatty-gateway plugin build: src/plugin\\.js:${line}:\\d+: Unexpected token\\n`));
    } finally {
      writeFileSync(source, original);
    }
  });

  it('the README\'s serve command, run as printed from the plugin, serves it with no --modules-dir warning', async () => {
    writeFileSync(join(plugin, 'plugin.wasm'), await buildFixture('echo')); // stands in for the build's output
    // The run's own cache and config: serve's defaults are the user's ~/.cache and ~/.config, shared by every run on the machine.
    const env = { ...process.env, XDG_CACHE_HOME: join(home.path, 'cache'), XDG_CONFIG_HOME: join(home.path, 'config') };
    const serve = spawnCli([...wordsOf(commands[1]!), '--json', '--runtime-dir', join(home.path, 'run')], env, plugin);
    const stderr = collect(serve.stderr);
    const status = exited(serve);
    try {
      assert.deepEqual(await servedModuleNames(serve), ['hello']);
    } finally {
      serve.kill('SIGTERM');
    }
    assert.equal((await status).code, 0);
    assert.equal(await stderr, '', 'no warning: `..` is the folder that holds the plugin');
    assert.equal(readdirSync(join(home.path, 'cache', 'chatty-gateway', 'plugins', 'transpiled')).length, 1, "transpiled into the run's own cache");
  });
});
