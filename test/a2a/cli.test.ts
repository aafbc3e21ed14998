/**
 * `chatty-gateway serve --remote-runner URL` through the real bin: the runner's token comes from
 * CHATTY_REMOTE_RUNNER_TOKEN, a forwarded module answers through the socket, a bad URL is a usage
 * error.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../helpers/gateway.js';
import { collect, exited, firstLine, runCli, spawnCli } from '../helpers/cli.js';
import { unixRequest } from '../helpers/http.js';
import { writeModuleDir } from '../helpers/wasm-fixtures.js';
import { A2aRunner } from './runner.js';
import { remoteManifest } from './helpers.js';

const scratch = tempDir('chatty-a2a-cli-');
const modulesDir = join(scratch.path, 'modules');
let runner: A2aRunner;
before(async () => {
  writeModuleDir(modulesDir, 'echo', { manifest: remoteManifest('echo') });
  runner = await new A2aRunner({ token: 'from-the-env' }).start();
});
after(async () => {
  await runner.close();
  scratch.remove();
});

/**
 * A process start from the TypeScript sources took 20 s and more at load 38: the file starts as
 * few as its checks need (one serve child both forwards and is listed), and each test has its own
 * hang guard, not one for the file (whose 180 s ran out with four tests left at that load).
 */
const HANG_GUARD = { timeout: 180_000 };

/** `GET /` lists the remote module, and serve's stderr says where it goes, never "not loaded". */
function assertListed(index: { status: number; body: string }, said: string, withRunner: boolean): void {
  assert.equal(index.status, 200);
  assert.deepEqual((JSON.parse(index.body) as { modules: unknown[] }).modules, [
    { name: 'echo', version: '2.1.0', description: 'the remote agent echo', surfaces: ['/a2a/echo'], remote: { executionMode: 'remote', forwardedTo: withRunner ? runner.url : null } },
  ]);
  assert.doesNotMatch(said, /not loaded/);
  assert.match(
    said,
    withRunner
      ? new RegExp(`module echo is remote \\(remote\\): forwarded to the remote runner at ${runner.url.replace(/\./g, '\\.')} \\(POST /a2a/echo\\)`)
      : /module echo is remote \(remote\): no remote runner is set, so POST \/a2a\/echo answers 503/,
  );
}

describe('chatty-gateway serve --remote-runner', () => {
  it('forwards a remote module to the runner with the token from CHATTY_REMOTE_RUNNER_TOKEN; the module is reported as forwarded to the runner, never as "not loaded", and GET / lists it', HANG_GUARD, async () => {
    const runtimeDir = join(scratch.path, 'run');
    const child = spawnCli(['serve', '--json', '--runtime-dir', runtimeDir, '--modules-dir', modulesDir, '--remote-runner', runner.url], {
      ...process.env,
      CHATTY_REMOTE_RUNNER_TOKEN: 'from-the-env',
    });
    const stderr = collect(child.stderr);
    const ready = JSON.parse(await firstLine(child)) as { socket: string; token: string };
    const token = readFileSync(ready.token, 'utf8');
    const index = await unixRequest(ready.socket, { path: '/', headers: { authorization: `Bearer ${token}` } });
    const seen = runner.nextRequest();
    const res = await unixRequest(ready.socket, {
      method: 'POST',
      path: '/a2a/echo',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'a2a-version': '0.3' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'over the bin' }] } },
      }),
    });
    assert.equal(res.status, 200);
    const body = JSON.parse(res.body) as { result: { kind: string; artifacts: { parts: { text: string }[] }[] } };
    assert.equal(body.result.kind, 'task');
    assert.equal(body.result.artifacts[0]?.parts[0]?.text, 'echo: over the bin');
    const request = await seen;
    assert.equal(request.headers.authorization, 'Bearer from-the-env');
    assert.ok(!request.rawHeaders.join('\n').includes(token));
    child.kill('SIGTERM');
    assert.deepEqual(await exited(child), { code: 0, signal: null });
    assertListed(index, await stderr, true);
  });

  it('without a runner a remote module is reported as waiting for a runner, never as "not loaded", and GET / lists it', HANG_GUARD, async () => {
    const child = spawnCli(['serve', '--json', '--runtime-dir', join(scratch.path, 'run-listed-no-runner'), '--modules-dir', modulesDir]);
    const stderr = collect(child.stderr);
    const ready = JSON.parse(await firstLine(child)) as { socket: string; token: string };
    const index = await unixRequest(ready.socket, { path: '/', headers: { authorization: `Bearer ${readFileSync(ready.token, 'utf8')}` } });
    child.kill('SIGTERM');
    assert.deepEqual(await exited(child), { code: 0, signal: null });
    assertListed(index, await stderr, false);
  });

  it('without a token in the environment nothing is sent as one (the runner refuses: 502)', HANG_GUARD, async () => {
    const runtimeDir = join(scratch.path, 'run-no-token');
    const env = { ...process.env };
    delete env['CHATTY_REMOTE_RUNNER_TOKEN'];
    const child = spawnCli(['serve', '--json', '--runtime-dir', runtimeDir, '--modules-dir', modulesDir, '--remote-runner', runner.url], env);
    child.stderr.resume();
    const ready = JSON.parse(await firstLine(child)) as { socket: string; token: string };
    const seen = runner.nextRequest();
    const res = await unixRequest(ready.socket, {
      method: 'POST',
      path: '/a2a/echo',
      headers: { authorization: `Bearer ${readFileSync(ready.token, 'utf8')}`, 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}',
    });
    assert.equal(res.status, 502);
    assert.equal((await seen).headers.authorization, undefined);
    child.kill('SIGTERM');
    assert.deepEqual(await exited(child), { code: 0, signal: null });
  });

  // Four process starts that each end by themselves: started together, each checked in its own test.
  const refusedUrls = [
    ['ftp://127.0.0.1/', /must be http: or https:/],
    ['not a url', /is a URL/],
    ['http://me:secret@127.0.0.1/', /CHATTY_REMOTE_RUNNER_TOKEN, not in the URL/],
    ['http://127.0.0.1/?x=1', /no query or fragment/],
  ] as const;
  let refusals: Map<string, ReturnType<typeof runCli>> | undefined;
  const refusalOf = (url: string): ReturnType<typeof runCli> => {
    refusals ??= new Map(refusedUrls.map(([u], i) => [u, runCli(['serve', '--runtime-dir', join(scratch.path, `never-${i}`), '--remote-runner', u])]));
    return refusals.get(url)!;
  };
  for (const [url, why] of refusedUrls) {
    it(`refuses --remote-runner ${url} as a usage error (exit 2)`, HANG_GUARD, async () => {
      const result = await refusalOf(url);
      assert.equal(result.code, 2);
      assert.match(result.stderr, why);
      assert.match(result.stderr, /usage: chatty-gateway serve/);
    });
  }

  it('--help names the flag', HANG_GUARD, async () => {
    const result = await runCli(['serve', '--help']);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /--remote-runner <url>/);
  });
});
