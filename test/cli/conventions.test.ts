// Command-line conventions, through the real bin in a directory with no package.json above it:
// -h/--help on every command prints its usage and exits 0, --version, and every usage error
// (an unknown flag, a missing or extra argument, an unknown command) exits 2 with the usage line.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { REPO_ROOT, outsideAnyPackage, runCli } from '../helpers/cli.js';

const home = outsideAnyPackage();
after(() => home.remove());
const cli = (args: readonly string[]) => runCli(args, { cwd: home.path });

/** Every command and subcommand, with the usage commander prints for it. */
const COMMANDS: { path: string[]; usage: string }[] = [
  { path: [], usage: 'chatty-gateway [options] [command]' },
  { path: ['serve'], usage: 'chatty-gateway serve [options]' },
  { path: ['mcp-stdio'], usage: 'chatty-gateway mcp-stdio [options] <module>' },
  { path: ['run'], usage: 'chatty-gateway run [options] <agent> <prompt...>' },
  { path: ['worker'], usage: 'chatty-gateway worker [options]' },
  { path: ['plugin'], usage: 'chatty-gateway plugin [options] [command]' },
  { path: ['plugin', 'new'], usage: 'chatty-gateway plugin new [options] <path>' },
  { path: ['plugin', 'build'], usage: 'chatty-gateway plugin build [options] <dir>' },
];

const name = (path: string[]): string => ['chatty-gateway', ...path].join(' ');
/** The usage line of the command at `path`, from the table. */
const usageOf = (...path: string[]): string => COMMANDS.find((c) => c.path.join(' ') === path.join(' '))!.usage;

describe('help', () => {
  for (const { path, usage } of COMMANDS) {
    for (const flag of ['--help', '-h']) {
      test(`${name(path)} ${flag} prints its usage on stdout and exits 0`, async () => {
        const result = await cli([...path, flag]);
        assert.equal(result.code, 0);
        assert.equal(result.stderr, '');
        assert.ok(result.stdout.startsWith(`Usage: ${usage}\n`), result.stdout);
        // Nothing was run: no plugin directory named --help, no build, no gateway.
        assert.deepEqual(readdirSync(home.path), []);
      });
    }
  }

  test('`help <command>` is the same help, exit 0', async () => {
    const [viaCommand, viaFlag] = await Promise.all([cli(['help', 'serve']), cli(['serve', '--help'])]);
    assert.equal(viaCommand.code, 0);
    assert.equal(viaCommand.stdout, viaFlag.stdout);
  });

  test('the top-level help names every command', async () => {
    const { stdout } = await cli(['--help']);
    for (const command of ['serve', 'mcp-stdio', 'run', 'worker', 'plugin', 'help']) assert.match(stdout, new RegExp(`^  ${command} `, 'm'));
  });
});

test('--version prints the package version and exits 0', async () => {
  const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  for (const flag of ['--version', '-V']) {
    const result = await cli([flag]);
    assert.deepEqual(result, { code: 0, stdout: `${version}\n`, stderr: '' });
  }
});

describe('usage errors exit 2 with the error and the usage line', () => {
  for (const { path, usage } of COMMANDS) {
    test(`${name(path)} --frobnicate`, async () => {
      const result = await cli([...path, '--frobnicate']);
      assert.equal(result.code, 2);
      assert.equal(result.stdout, '');
      assert.equal(result.stderr, `chatty-gateway: unknown option '--frobnicate'\nusage: ${usage}\n(${name(path)} --help for more)\n`);
    });
  }

  const cases: { args: string[]; error: RegExp; usage: string }[] = [
    { args: ['frobnicate'], error: /^chatty-gateway: unknown command 'frobnicate'$/, usage: usageOf() },
    { args: ['plugin', 'frobnicate'], error: /^chatty-gateway: unknown command 'frobnicate'$/, usage: usageOf('plugin') },
    { args: ['plugin', 'build'], error: /^chatty-gateway: missing required argument 'dir'$/, usage: usageOf('plugin', 'build') },
    { args: ['plugin', 'new'], error: /^chatty-gateway: missing required argument 'path'$/, usage: usageOf('plugin', 'new') },
    { args: ['mcp-stdio'], error: /^chatty-gateway: missing required argument 'module'$/, usage: usageOf('mcp-stdio') },
    { args: ['plugin', 'build', 'a', 'b'], error: /^chatty-gateway: too many arguments for 'build'/, usage: usageOf('plugin', 'build') },
    { args: ['run'], error: /^chatty-gateway: missing required argument 'agent'$/, usage: usageOf('run') },
    { args: ['run', 'local-coder'], error: /^chatty-gateway: missing required argument 'prompt'$/, usage: usageOf('run') },
    { args: ['worker', 'extra'], error: /^chatty-gateway: too many arguments for 'worker'/, usage: usageOf('worker') },
    { args: ['serve', 'extra'], error: /^chatty-gateway: too many arguments for 'serve'/, usage: usageOf('serve') },
    { args: ['serve', '--runtime-dir'], error: /^chatty-gateway: option '--runtime-dir <dir>' argument missing$/, usage: usageOf('serve') },
  ];
  for (const { args, error, usage } of cases) {
    test(`chatty-gateway ${args.join(' ')}`, async () => {
      const result = await cli(args);
      assert.equal(result.code, 2);
      assert.equal(result.stdout, '');
      const [first, second] = result.stderr.split('\n');
      assert.match(first!, error);
      assert.equal(second, `usage: ${usage}`);
      assert.deepEqual(readdirSync(home.path), []);
    });
  }

  test('no command at all: the help, on stderr, exit 2', async () => {
    const result = await cli([]);
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.ok(result.stderr.startsWith(`Usage: ${usageOf()}\n`));
  });

  test('plugin without a subcommand: its help, on stderr, exit 2', async () => {
    const result = await cli(['plugin']);
    assert.equal(result.code, 2);
    assert.ok(result.stderr.startsWith(`Usage: ${usageOf('plugin')}\n`));
  });
});

test('mcp-stdio <module> --runtime-dir DIR reaches the bridge with both: no gateway there is one line naming DIR, exit 1', async () => {
  const runtimeDir = join(home.path, 'no-gateway-here');
  const result = await cli(['mcp-stdio', 'echo', '--runtime-dir', runtimeDir]);
  assert.equal(result.code, 1);
  assert.equal(result.stdout, '');
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  assert.match(result.stderr, /^chatty-gateway: /);
  assert.ok(result.stderr.includes(runtimeDir), result.stderr);
});
