import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { tempDir } from '../helpers/gateway.js';
import { buildFixture, writeModuleDir } from '../helpers/wasm-fixtures.js';
import { collect, exited, firstLine, spawnCli } from '../helpers/cli.js';
import { unixRequest } from '../helpers/http.js';

const scratch = tempDir('chatty-cli-');
const modulesDir = join(scratch.path, 'modules');
before(async () => {
  writeModuleDir(modulesDir, 'echo', { component: await buildFixture('echo') });
  writeModuleDir(modulesDir, 'broken', { manifest: '[module]\nname = "broken"\nunknown = 1\n' });
});
after(() => scratch.remove());

interface IndexBody {
  modules: { name: string; surfaces: string[] }[];
}

describe('chatty-gateway serve', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    test(`--json prints the ready line, serves, and stops cleanly on ${signal}`, async () => {
      const runtimeDir = join(scratch.path, `run-${signal}`);
      const child = spawnCli(['serve', '--json', '--runtime-dir', runtimeDir, '--modules-dir', modulesDir]);
      const line = await firstLine(child);
      const ready = JSON.parse(line) as Record<string, unknown>;
      assert.deepEqual(ready, {
        event: 'ready',
        socket: join(runtimeDir, 'gateway.sock'),
        token: join(runtimeDir, 'gateway.token'),
        agents: ['local-coder', 'local-reviewer'],
      });
      assert.deepEqual(Object.keys(ready), ['event', 'socket', 'token', 'agents']);

      const socketPath = ready.socket as string;
      const token = readFileSync(ready.token as string, 'utf8');
      assert.equal((await unixRequest(socketPath, { path: '/' })).status, 401);
      const ok = await unixRequest(socketPath, { path: '/', headers: { authorization: `Bearer ${token}` } });
      assert.equal(ok.status, 200);
      assert.deepEqual((JSON.parse(ok.body) as IndexBody).modules.map((m) => m.name), ['echo']);

      child.kill(signal);
      assert.deepEqual(await exited(child), { code: 0, signal: null });
      assert.ok(!existsSync(socketPath));
      assert.ok(!existsSync(ready.token as string));
    });
  }

  test('without --json, a banner says where the socket and token are and how to curl', async () => {
    const runtimeDir = join(scratch.path, 'run-banner');
    const child = spawnCli(['serve', '--runtime-dir', runtimeDir, '--modules-dir', modulesDir]);
    const first = await firstLine(child);
    assert.equal(first, 'chatty-gateway: serving 1 module');
    child.kill('SIGTERM');
    const [rest, stderr] = await Promise.all([collect(child.stdout), collect(child.stderr)]);
    // The broken module is reported on stderr and skipped; it does not stop the others.
    assert.match(stderr, /module not loaded: .*broken: /);
    assert.match(rest, new RegExp(`socket: ${join(runtimeDir, 'gateway.sock')}`));
    assert.match(rest, new RegExp(`token: +${join(runtimeDir, 'gateway.token')}`));
    assert.ok(rest.includes(`curl --unix-socket ${join(runtimeDir, 'gateway.sock')} -H "Authorization: Bearer $(cat ${join(runtimeDir, 'gateway.token')})" http://localhost/`));
    assert.equal((await exited(child)).code, 0);
  });

  test('a plugin whose JavaScript is newer than its plugin.wasm is served, with a warning naming plugin build', async () => {
    const staleModules = join(scratch.path, 'stale-modules');
    const dir = writeModuleDir(staleModules, 'hello', { component: await buildFixture('echo'), extra: { 'src/plugin.js': 'export const plugin = {};\n' } });
    utimesSync(join(dir, 'plugin.wasm'), 1_000_000, 1_000_000);
    const child = spawnCli(['serve', '--runtime-dir', join(scratch.path, 'run-stale'), '--modules-dir', staleModules]);
    assert.equal(await firstLine(child), 'chatty-gateway: serving 1 module');
    child.kill('SIGTERM');
    const [, stderr] = await Promise.all([collect(child.stdout), collect(child.stderr)]);
    assert.ok(
      stderr.includes(
        `chatty-gateway: warning: module hello: plugin.wasm is older than src/plugin.js: serving the build from before that change; rebuild it with \`npx chatty-gateway plugin build ${dir}\`\n`,
      ),
      stderr,
    );
  });

  test('an unusable runtime directory is a one-line error and a non-zero exit', async () => {
    const runtimeDir = join(scratch.path, 'open-dir');
    mkdirSync(runtimeDir);
    chmodSync(runtimeDir, 0o755);
    const child = spawnCli(['serve', '--json', '--runtime-dir', runtimeDir]);
    const [stdout, stderr, status] = await Promise.all([collect(child.stdout), collect(child.stderr), exited(child)]);
    assert.equal(status.code, 1);
    assert.equal(stdout, '');
    assert.equal(stderr, `chatty-gateway: refusing runtime directory ${runtimeDir}: its mode is 0755; group and others must have no access (chmod 700)\n`);
  });

  test('without --modules-dir it serves the bundled examples (built on first use, then cached)', async () => {
    const runtimeDir = join(scratch.path, 'run-examples');
    const child = spawnCli(['serve', '--json', '--runtime-dir', runtimeDir]);
    const ready = JSON.parse(await firstLine(child)) as { socket: string; token: string };
    const token = readFileSync(ready.token, 'utf8');
    const res = await unixRequest(ready.socket, { path: '/', headers: { authorization: `Bearer ${token}` } });
    const names = (JSON.parse(res.body) as IndexBody).modules.map((m) => m.name).sort();
    assert.deepEqual(names, ['json-tools', 'text-tools']);
    child.kill('SIGINT');
    assert.equal((await exited(child)).code, 0);
  });

  test('a --modules-dir that does not exist is a one-line error', async () => {
    const child = spawnCli(['serve', '--json', '--runtime-dir', join(scratch.path, 'run-missing'), '--modules-dir', join(scratch.path, 'nope')]);
    const [stdout, stderr, status] = await Promise.all([collect(child.stdout), collect(child.stderr), exited(child)]);
    assert.equal(status.code, 1);
    assert.equal(stdout, '');
    assert.equal(stderr, `chatty-gateway: modules directory ${join(scratch.path, 'nope')} does not exist\n`);
  });

  test('an unknown flag is a usage error: the error, the usage line, exit 2', async () => {
    const child = spawnCli(['serve', '--port', '80']);
    const [stdout, stderr, status] = await Promise.all([collect(child.stdout), collect(child.stderr), exited(child)]);
    assert.equal(status.code, 2);
    assert.equal(stdout, '');
    assert.equal(
      stderr,
      "chatty-gateway: unknown option '--port'\nusage: chatty-gateway serve [options]\n(chatty-gateway serve --help for more)\n",
    );
  });
});
