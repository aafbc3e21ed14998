// `serve` stops on SIGHUP (its terminal closed, or a hangup sent by hand) as on SIGINT/SIGTERM:
// the socket and the token removed; a second SIGHUP while stopping leaves at once (129), and
// still removes them. (With a real terminal: test/cli/worker-no-terminal.test.ts.)
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { collect, exited, firstLine, outsideAnyPackage, spawnCli } from '../helpers/cli.js';

const home = outsideAnyPackage();
mkdirSync(join(home.path, 'plugins'));
after(() => home.remove());

test('SIGHUP stops serve cleanly (exit 0), removing the socket and the token', async () => {
  const child = spawnCli(['serve', '--json', '--runtime-dir', 'run-hup', '--modules-dir', 'plugins'], process.env, home.path);
  const stderr = collect(child.stderr);
  const ready = JSON.parse(await firstLine(child)) as { socket: string; token: string };
  assert.ok(existsSync(ready.socket) && existsSync(ready.token));
  child.kill('SIGHUP');
  assert.deepEqual(await exited(child), { code: 0, signal: null });
  assert.doesNotMatch(await stderr, /Error|\n\s+at /, 'no stack trace');
  assert.ok(!existsSync(ready.socket), 'the socket is removed');
  assert.ok(!existsSync(ready.token), 'the token is removed');
});

test('a second SIGHUP while stopping still leaves no socket or token behind (exit 0 or 129)', async () => {
  const child = spawnCli(['serve', '--json', '--runtime-dir', 'run-hup-twice', '--modules-dir', 'plugins'], process.env, home.path);
  const stderr = collect(child.stderr);
  const ready = JSON.parse(await firstLine(child)) as { socket: string; token: string };
  child.kill('SIGHUP');
  child.kill('SIGHUP');
  const status = await exited(child);
  // Whichever came first, the clean stop (0) or the forced one (129): nothing is left, nothing is thrown.
  assert.ok((status.code === 0 || status.code === 129) && status.signal === null, JSON.stringify(status));
  assert.doesNotMatch(await stderr, /Error|\n\s+at /, 'no stack trace');
  assert.ok(!existsSync(ready.socket), 'the socket is removed');
  assert.ok(!existsSync(ready.token), 'the token is removed');
});
