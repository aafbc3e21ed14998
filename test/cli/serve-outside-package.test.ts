// `serve` started where no package.json is above the working directory (a global install, a
// plugins folder elsewhere): the edge log is still written, and a stop is clean.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { EdgeRow } from '../../main/gateway/index.js';
import { collect, exited, firstLine, outsideAnyPackage, spawnCli } from '../helpers/cli.js';
import { unixRequest } from '../helpers/http.js';
import { buildFixture, writeModuleDir } from '../helpers/wasm-fixtures.js';

const home = outsideAnyPackage();
before(async () => {
  writeModuleDir(join(home.path, 'plugins'), 'echo', { component: await buildFixture('echo') });
});
after(() => home.remove());

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`edge.log gets its rows, and ${signal} stops without a stack trace, removing the socket and the token`, async () => {
    const runtimeDir = join(home.path, `run-${signal}`);
    // Relative paths: they are taken from the working directory, as a user would type them.
    const child = spawnCli(['serve', '--json', '--runtime-dir', `run-${signal}`, '--modules-dir', 'plugins'], process.env, home.path);
    const stderr = collect(child.stderr);
    const ready = JSON.parse(await firstLine(child)) as { socket: string; token: string };
    assert.equal(ready.socket, join(runtimeDir, 'gateway.sock'));
    const token = readFileSync(ready.token, 'utf8');
    const res = await unixRequest(ready.socket, { path: '/', headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    assert.equal((await unixRequest(ready.socket, { path: '/nowhere' })).status, 401);

    child.kill(signal);
    assert.deepEqual(await exited(child), { code: 0, signal: null });
    assert.equal(await stderr, '', 'nothing on stderr: no stack trace, no electron-log complaint');
    assert.ok(!existsSync(ready.socket), 'the socket is removed');
    assert.ok(!existsSync(ready.token), 'the token is removed');
    const rows = readFileSync(join(runtimeDir, 'edge.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as EdgeRow);
    assert.deepEqual(rows.map((r) => [r.method, r.path, r.status]), [['GET', '/', 200], ['GET', '/nowhere', 401]]);
  });
}

test('the banner form stops as cleanly, saying how it stopped', async () => {
  mkdirSync(join(home.path, 'empty'), { recursive: true });
  const child = spawnCli(['serve', '--runtime-dir', 'run-banner', '--modules-dir', 'plugins'], process.env, home.path);
  const stderr = collect(child.stderr);
  assert.equal(await firstLine(child), 'chatty-gateway: serving 1 module');
  const rest = collect(child.stdout);
  child.kill('SIGINT');
  assert.equal((await exited(child)).code, 0);
  assert.equal(await stderr, '');
  assert.match(await rest, /chatty-gateway: stopped \(SIGINT\)\n$/);
  assert.ok(!existsSync(join(home.path, 'run-banner', 'gateway.token')));
  assert.ok(!existsSync(join(home.path, 'run-banner', 'gateway.sock')));
});

test('a second SIGINT while stopping still leaves no socket or token behind', async () => {
  const child = spawnCli(['serve', '--json', '--runtime-dir', 'run-twice', '--modules-dir', 'plugins'], process.env, home.path);
  const stderr = collect(child.stderr);
  const ready = JSON.parse(await firstLine(child)) as { socket: string; token: string };
  child.kill('SIGINT');
  child.kill('SIGINT');
  const status = await exited(child);
  // Whichever came first, the clean stop (0) or the forced one (130): nothing is left, nothing is thrown.
  assert.ok(status.code === 0 || status.code === 130, JSON.stringify(status));
  assert.equal(await stderr, '');
  assert.ok(!existsSync(ready.socket));
  assert.ok(!existsSync(ready.token));
});
