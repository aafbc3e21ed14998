// `serve`'s reader going away (`serve | head -2`, a supervisor that stopped reading) makes each
// write to its stdout fail with EPIPE. That is not a crash: serve goes on serving unheard, as it
// does when its terminal is gone (EIO), and stops cleanly when told: socket and token removed.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { collect, exited, firstLine, outsideAnyPackage, spawnCli } from '../helpers/cli.js';
import { unixRequest } from '../helpers/http.js';

const home = outsideAnyPackage();
mkdirSync(join(home.path, 'plugins'));
after(() => home.remove());

function paths(runtimeDir: string): { socket: string; token: string } {
  return { socket: join(home.path, runtimeDir, 'gateway.sock'), token: join(home.path, runtimeDir, 'gateway.token') };
}

/** GET / with the token, once serve answers it (nothing on stdout says when: its reader is gone). */
async function answersIndex(socket: string, token: string, child: { exitCode: number | null }): Promise<number> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited (${child.exitCode}) before it answered`);
    if (existsSync(token)) {
      try {
        return (await unixRequest(socket, { path: '/', headers: { authorization: `Bearer ${readFileSync(token, 'utf8')}` } })).status;
      } catch {
        // not listening yet
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

test('stdout closed by its reader after the first line: serve stops cleanly on SIGTERM (its stop line EPIPEs)', async () => {
  const { socket, token } = paths('run-epipe-stop');
  const child = spawnCli(['serve', '--runtime-dir', 'run-epipe-stop', '--modules-dir', 'plugins'], process.env, home.path);
  const stderr = collect(child.stderr);
  assert.match(await firstLine(child), /^chatty-gateway: serving 0 modules$/);
  assert.equal(await answersIndex(socket, token, child), 200);
  child.stdout.destroy(); // the reader is gone: the stop line fails with EPIPE
  child.kill('SIGTERM');
  assert.deepEqual(await exited(child), { code: 0, signal: null });
  assert.doesNotMatch(await stderr, /Error|\n\s+at /, 'no stack trace');
  assert.ok(!existsSync(socket), 'the socket is removed');
  assert.ok(!existsSync(token), 'the token is removed');
});

test('stdout closed before the banner: serve goes on serving unheard, then stops cleanly', async () => {
  const { socket, token } = paths('run-epipe-banner');
  const child = spawnCli(['serve', '--runtime-dir', 'run-epipe-banner', '--modules-dir', 'plugins'], process.env, home.path);
  const stderr = collect(child.stderr);
  child.stdout.destroy(); // before serve writes anything: its banner fails with EPIPE
  assert.equal(await answersIndex(socket, token, child), 200);
  child.kill('SIGTERM');
  assert.deepEqual(await exited(child), { code: 0, signal: null });
  assert.doesNotMatch(await stderr, /Error|\n\s+at /, 'no stack trace');
  assert.ok(!existsSync(socket), 'the socket is removed');
  assert.ok(!existsSync(token), 'the token is removed');
});
