// `serve` refuses a runtime directory it cannot use before it creates or loads anything: one
// line on stderr, exit 1.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { maxSocketPathBytes } from '../../main/gateway/access/index.js';
import { outsideAnyPackage, runCli } from '../helpers/cli.js';

const home = outsideAnyPackage();
after(() => home.remove());

test('a runtime directory whose socket path is too long for a Unix socket: refused up front, nothing created', async () => {
  const limit = maxSocketPathBytes();
  // Two levels, neither of which exists yet: the first must still not exist afterwards.
  const first = join(home.path, 'deep');
  const runtimeDir = join(first, 'r'.repeat(limit));
  const socket = join(runtimeDir, 'gateway.sock');
  const result = await runCli(['serve', '--json', '--runtime-dir', runtimeDir, '--modules-dir', home.path], { cwd: home.path });
  assert.equal(result.code, 1);
  assert.equal(result.stdout, '');
  assert.equal(
    result.stderr,
    `chatty-gateway: refusing runtime directory ${runtimeDir}: the socket path ${socket} is ${Buffer.byteLength(socket)} bytes; ` +
      `a Unix socket path can be at most ${limit} bytes on ${process.platform === 'darwin' ? 'macOS' : 'Linux'}: choose a shorter runtime directory\n`,
  );
  assert.ok(!existsSync(first), 'nothing is created');
  assert.deepEqual(readdirSync(home.path), []);
});

test('a runtime directory that is a regular file: "it is not a directory", and the file is left alone', async () => {
  writeFileSync(join(home.path, 'run'), 'mine');
  const result = await runCli(['serve', '--runtime-dir', 'run', '--modules-dir', '.'], { cwd: home.path });
  assert.equal(result.code, 1);
  assert.equal(result.stdout, '');
  assert.equal(result.stderr, `chatty-gateway: refusing runtime directory ${join(home.path, 'run')}: it is not a directory\n`);
  assert.equal(readFileSync(join(home.path, 'run'), 'utf8'), 'mine');
});

test('a runtime directory under a regular file: a parent is not a directory', async () => {
  const result = await runCli(['serve', '--runtime-dir', 'run/sub', '--modules-dir', '.'], { cwd: home.path });
  assert.equal(result.code, 1);
  assert.equal(result.stderr, `chatty-gateway: refusing runtime directory ${join(home.path, 'run', 'sub')}: a parent of it is not a directory\n`);
});

test('a serve that fails after creating its runtime directory (no such --modules-dir) leaves none of it; one it found is kept', async () => {
  const missingModules = join(home.path, 'no-such-plugins');
  // Two levels that do not exist: both are gone afterwards.
  const made = join(home.path, 'made');
  const runtimeDir = join(made, 'run');
  const result = await runCli(['serve', '--json', '--runtime-dir', runtimeDir, '--modules-dir', missingModules], { cwd: home.path });
  assert.equal(result.code, 1);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^chatty-gateway: .*no-such-plugins.*\n$/);
  assert.ok(!existsSync(made), `${made} is left behind`);

  // The default runtime directory ($XDG_RUNTIME_DIR/chatty-run) too.
  const xdg = join(home.path, 'xdg');
  mkdirSync(xdg, { mode: 0o700 });
  const byDefault = await runCli(['serve', '--modules-dir', missingModules], { cwd: home.path, env: { ...process.env, XDG_RUNTIME_DIR: xdg } });
  assert.equal(byDefault.code, 1);
  assert.deepEqual(readdirSync(xdg), []);

  // A runtime directory that was there before is the user's: kept, with what it holds.
  const kept = join(home.path, 'kept');
  mkdirSync(kept, { mode: 0o700 });
  writeFileSync(join(kept, 'edge.log'), 'earlier rows\n');
  const again = await runCli(['serve', '--runtime-dir', kept, '--modules-dir', missingModules], { cwd: home.path });
  assert.equal(again.code, 1);
  assert.equal(readFileSync(join(kept, 'edge.log'), 'utf8'), 'earlier rows\n');
});
