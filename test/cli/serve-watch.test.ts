import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { exited, firstLine, runCli, spawnCli, watchOutput } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { unixRequest } from '../helpers/http.js';
import { buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

const scratch = tempDir('chatty-serve-watch-');
after(() => scratch.remove());

const STREAMABLE = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
const toolsList = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

describe('chatty-gateway serve --watch (real bin)', { timeout: 180_000 }, () => {
  test('a rebuilt component, a plugin folder added and one removed take effect without a restart, one line each', async () => {
    const modules = join(scratch.path, 'modules');
    writeModuleDir(modules, 'echo', { manifest: fixtureManifest('echo'), component: await buildFixture('echo') });
    const env = { ...process.env, XDG_CACHE_HOME: join(scratch.path, 'cache'), XDG_CONFIG_HOME: join(scratch.path, 'config') };
    const child = spawnCli(['serve', '--json', '--no-bundled-agents', '--watch', '--approvals', 'allow', '--runtime-dir', join(scratch.path, 'run'), '--modules-dir', modules], env);
    const ended = exited(child);
    const stderr = watchOutput(child, child.stderr, ended);
    try {
      const ready = JSON.parse(await firstLine(child)) as { socket: string; token: string };
      const auth = { authorization: `Bearer ${readFileSync(ready.token, 'utf8')}` };
      const tools = async (module: string): Promise<string[]> => {
        const res = await unixRequest(ready.socket, { method: 'POST', path: `/mcp/${module}`, headers: { ...auth, ...STREAMABLE }, body: toolsList });
        return (JSON.parse(res.body) as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name);
      };
      const served = async (): Promise<string[]> =>
        (JSON.parse((await unixRequest(ready.socket, { path: '/', headers: auth })).body) as { modules: { name: string }[] }).modules.map((m) => m.name);
      const saidLines = (): string[] => stderr.text().split('\n').filter((l) => /module (echo|second)/.test(l));
      const said = (line: string): Promise<void> => stderr.until(() => stderr.text().includes(`chatty-gateway: ${line}\n`), line);

      assert.ok(!(await tools('echo')).includes('slow'));
      // `plugin build` (or any build) writes a new component: picked up.
      writeFileSync(join(modules, 'echo', 'plugin.wasm'), await buildFixture('slow'));
      await said('module echo: reloaded (its component changed)');
      assert.ok((await tools('echo')).includes('slow'));

      const aside = join(scratch.path, 'aside');
      writeModuleDir(aside, 'second', { manifest: fixtureManifest('second'), component: await buildFixture('echo') });
      cpSync(join(aside, 'second'), join(modules, 'second'), { recursive: true });
      await said('module second: added: served from second');
      assert.deepEqual(await served(), ['echo', 'second']);

      rmSync(join(modules, 'second'), { recursive: true });
      await said('module second: its folder second is gone: unloaded');
      assert.deepEqual(await served(), ['echo']);
      assert.deepEqual(saidLines(), [
        'chatty-gateway: module echo: reloaded (its component changed)',
        'chatty-gateway: module second: added: served from second',
        'chatty-gateway: module second: its folder second is gone: unloaded',
      ]);
    } finally {
      child.kill('SIGTERM');
      assert.deepEqual(await ended, { code: 0, signal: null });
    }
  });

  test('--watch without --modules-dir is refused in one line: the bundled examples are not watched', async () => {
    const result = await runCli(['serve', '--watch', '--runtime-dir', join(scratch.path, 'run-refused')]);
    assert.equal(result.code, 1);
    assert.equal(result.stderr, 'chatty-gateway: --watch needs --modules-dir: it watches the folder that holds your plugin directories (the bundled examples are not watched)\n');
  });
});
