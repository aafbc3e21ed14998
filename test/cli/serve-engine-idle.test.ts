// `serve --engine-idle-ms <ms>`: the plugins' idle time reaches the registry (0 keeps every engine
// running from the load; by default none runs until its plugin is called), and a bad value is a
// usage error in the registry's words, with nothing created.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { tempDir } from '../helpers/gateway.js';
import { buildFixture, writeModuleDir } from '../helpers/wasm-fixtures.js';
import { collect, exited, runCli, spawnCli } from '../helpers/cli.js';

const scratch = tempDir('chatty-cli-idle-');
const modulesDir = join(scratch.path, 'modules');
/** One transpile cache for every serve here: the first load records the tools, as on a user's machine. */
const env = { ...process.env, XDG_CACHE_HOME: join(scratch.path, 'cache') };
before(async () => {
  const component = await buildFixture('echo');
  writeModuleDir(modulesDir, 'one', { component });
  writeModuleDir(modulesDir, 'two', { component });
});
after(() => scratch.remove());

/** The banner of a `serve` with these extra flags (stdout up to its last line), then a clean stop. */
async function banner(flags: readonly string[], run: string): Promise<string> {
  const child = spawnCli(['serve', '--no-bundled-agents', '--runtime-dir', join(scratch.path, run), '--modules-dir', modulesDir, ...flags], env);
  child.stdin.end();
  let out = '';
  child.stdout.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('  stop:   Ctrl-C\n')) resolve();
    });
    child.once('exit', () => reject(new Error(`serve exited before its banner:\n${out}`)));
  });
  child.kill('SIGTERM');
  const [stderr, status] = await Promise.all([collect(child.stderr), exited(child)]);
  assert.equal(status.code, 0, stderr);
  return out;
}

const engines = (text: string): string | undefined => /^ {2}engines: (.*)$/m.exec(text)?.[1];

describe('serve --engine-idle-ms', () => {
  test('--help shows the flag, what it does, 0 and the default', async () => {
    const help = await runCli(['serve', '--help']);
    assert.equal(help.code, 0);
    const text = help.stdout.replace(/\s+/g, ' ');
    assert.ok(
      text.includes("--engine-idle-ms <ms> stop a plugin's engine (its worker thread) this long after its last call; its next call starts it again; 0 keeps every engine running from the load (default: 300000, 5 min)"),
      help.stdout,
    );
  });

  for (const bad of ['5m', '-1', '1.5', '1e3', '2147483648', '']) {
    test(`--engine-idle-ms ${JSON.stringify(bad)} is a usage error in the registry's words: exit 2, nothing created`, async () => {
      const runtimeDir = join(scratch.path, `run-bad-${bad.length}`);
      const result = await runCli(['serve', '--engine-idle-ms', bad, '--runtime-dir', runtimeDir, '--modules-dir', modulesDir], { env });
      assert.equal(result.code, 2);
      assert.equal(result.stdout, '');
      assert.equal(
        result.stderr,
        `chatty-gateway: option '--engine-idle-ms <ms>' argument '${bad}' is invalid. the idle time must be a whole number of milliseconds from 0 (keep the engine resident) to 2147483647\n` +
          'usage: chatty-gateway serve [options]\n(chatty-gateway serve --help for more)\n',
      );
      assert.ok(!existsSync(runtimeDir), 'no runtime directory');
    });
  }

  test('0 reaches the registry: both engines run right after the load; by default neither does, and a given idle time is the one used', async () => {
    const resident = await banner(['--engine-idle-ms', '0'], 'run-resident');
    assert.match(resident, /^chatty-gateway: serving 2 modules$/m);
    assert.equal(engines(resident), '2 of 2 running, each kept from its load (--engine-idle-ms 0)');

    const lazy = await banner([], 'run-default');
    assert.equal(engines(lazy), "0 of 2 running; each starts on its plugin's first call and stops after 300000 ms without one (--engine-idle-ms)");

    const minute = await banner(['--engine-idle-ms', '60000'], 'run-minute');
    assert.equal(engines(minute), "0 of 2 running; each starts on its plugin's first call and stops after 60000 ms without one (--engine-idle-ms)");
  });
});
