// `plugin new` takes a path, and the "next:" commands it prints run as printed: here they go
// through a real shell for their words, then the real bin runs them, in a directory with no
// package.json above it. One componentize-js build (~20 s).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { collect, exited, outsideAnyPackage, runCli, servedModuleNames, spawnCli } from '../helpers/cli.js';

const home = outsideAnyPackage();
after(() => home.remove());

/** The printed command's words as a POSIX shell splits them, without the `npx chatty-gateway` a user's project provides. */
function wordsOf(printed: string): string[] {
  const words = execFileSync('sh', ['-c', `printf '%s\\0' ${printed}`], { cwd: home.path, encoding: 'utf8' }).split('\0').slice(0, -1);
  assert.deepEqual(words.slice(0, 2), ['npx', 'chatty-gateway'], printed);
  return words.slice(2);
}

describe('plugin new <path>', () => {
  let next: string[] = [];

  test('creates the plugin at the path, named after its last part, and prints what to run next', async () => {
    const result = await runCli(['plugin', 'new', './plugins/hello'], { cwd: home.path });
    assert.equal(result.code, 0, result.stderr);
    const target = join(home.path, 'plugins', 'hello');
    assert.match(readFileSync(join(target, 'module.toml'), 'utf8'), /^name = "hello"$/m);
    assert.equal(
      result.stdout,
      `created ${target}\n\nnext:\n` +
        '  edit plugins/hello/src/plugin.js\n' +
        '  npx chatty-gateway plugin build plugins/hello\n' +
        '  npx chatty-gateway serve --modules-dir plugins\n',
    );
    next = result.stdout.split('\n').filter((line) => line.startsWith('  npx ')).map((line) => line.trim());
  });

  test('the printed build command builds it, and the printed serve command serves it', async () => {
    assert.equal(next.length, 2, 'the previous test printed the commands');
    const build = await runCli(wordsOf(next[0]!), { cwd: home.path });
    assert.equal(build.code, 0, build.stderr);
    assert.ok(existsSync(join(home.path, 'plugins', 'hello', 'plugin.wasm')));

    const serve = spawnCli([...wordsOf(next[1]!), '--json', '--runtime-dir', 'run'], process.env, home.path);
    const stderr = collect(serve.stderr);
    try {
      assert.deepEqual(await servedModuleNames(serve), ['hello']);
    } finally {
      serve.kill('SIGTERM'); // also when an assertion fails: a live server would hold the test run open
    }
    assert.equal((await exited(serve)).code, 0);
    assert.equal(await stderr, '', 'no --modules-dir warning: the printed folder is the right one');
  });

  test('a path with a space is quoted in the printed commands, so they still run as printed', async () => {
    const result = await runCli(['plugin', 'new', 'my plugins/spaced'], { cwd: home.path });
    assert.equal(result.code, 0, result.stderr);
    const printed = result.stdout.split('\n').filter((line) => line.startsWith('  npx ')).map((line) => line.trim());
    assert.deepEqual(printed, ["npx chatty-gateway plugin build 'my plugins/spaced'", "npx chatty-gateway serve --modules-dir 'my plugins'"]);
    assert.deepEqual(wordsOf(printed[0]!), ['plugin', 'build', 'my plugins/spaced']);
  });

  test('--dir still names the folder to create it in', async () => {
    const result = await runCli(['plugin', 'new', 'other', '--dir', 'plugins'], { cwd: home.path });
    assert.equal(result.code, 0, result.stderr);
    assert.ok(existsSync(join(home.path, 'plugins', 'other', 'module.toml')));
    assert.match(result.stdout, /^ {2}npx chatty-gateway plugin build plugins\/other$/m);
  });

  test('an existing directory is refused: one line, exit 1', async () => {
    const result = await runCli(['plugin', 'new', 'plugins/hello'], { cwd: home.path });
    assert.equal(result.code, 1);
    assert.equal(result.stderr, `chatty-gateway plugin new: ${join(home.path, 'plugins', 'hello')} already exists\n`);
  });
});
