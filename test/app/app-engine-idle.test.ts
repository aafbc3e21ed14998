// The desktop app's plugins' idle time: CHATTY_ENGINE_IDLE_MS reaches the registry as `serve
// --engine-idle-ms` does (0 keeps every engine running from the load), and a bad value is refused
// in the registry's words before anything is created.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startAppGateway } from '../../main/app/app-gateway.js';
import { Teardown } from '../../main/app/lifecycle.js';
import type { ModuleRegistry } from '../../main/plugins/index.js';
import { buildFixture, writeModuleDir } from '../helpers/wasm-fixtures.js';

const home = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-app-idle-')));
const modules = join(home, 'modules');
const workspace = join(home, 'workspace');
before(async () => {
  writeModuleDir(modules, 'echo', { component: await buildFixture('echo') });
  mkdirSync(workspace);
});
after(() => rmSync(home, { recursive: true, force: true }));

const log = { info: () => {}, error: () => {} };

/** The app's gateway started with CHATTY_ENGINE_IDLE_MS as given (unset when undefined); the echo plugin's engine state once it is up. */
async function echoEngineWith(idle: string | undefined, run: string): Promise<{ state: string; idleMs: number }> {
  const teardown = new Teardown(log);
  const env = { CHATTY_MODULES_DIR: modules, CHATTY_RUNTIME_DIR: join(home, run), CHATTY_WORKSPACE: workspace, ...(idle !== undefined ? { CHATTY_ENGINE_IDLE_MS: idle } : {}) };
  try {
    const { gateway } = await startAppGateway({ userData: join(home, `user-data-${run}`), isPackaged: true, env, cwd: '/', log }, teardown);
    const registry = gateway.registry as ModuleRegistry;
    return { state: registry.get('echo')!.engineState, idleMs: registry.engineIdleMs };
  } finally {
    await teardown.run();
  }
}

test('CHATTY_ENGINE_IDLE_MS=0: the engine runs from the load; unset, the default (5 min) and it does not; 60000 is the one used', async () => {
  assert.deepEqual(await echoEngineWith('0', 'run-0'), { state: 'running', idleMs: 0 });
  const byDefault = await echoEngineWith(undefined, 'run-default');
  assert.notEqual(byDefault.state, 'running');
  assert.equal(byDefault.idleMs, 300_000);
  assert.equal((await echoEngineWith('', 'run-empty')).idleMs, 300_000, 'empty is unset, as for the other CHATTY_ variables');
  assert.equal((await echoEngineWith('60000', 'run-minute')).idleMs, 60_000);
});

test('a bad CHATTY_ENGINE_IDLE_MS is refused in the registry\'s words, before anything is created', async () => {
  for (const bad of ['5m', '-1', '1.5']) {
    const teardown = new Teardown(log);
    const userData = join(home, `user-data-bad-${bad}`);
    await assert.rejects(
      startAppGateway({ userData, isPackaged: true, env: { CHATTY_MODULES_DIR: modules, CHATTY_RUNTIME_DIR: join(home, 'run-bad'), CHATTY_WORKSPACE: workspace, CHATTY_ENGINE_IDLE_MS: bad }, cwd: '/', log }, teardown),
      { name: 'EngineIdleMsError', message: `CHATTY_ENGINE_IDLE_MS must be a whole number of milliseconds from 0 (keep the engine resident) to 2147483647, not ${JSON.stringify(bad)}` },
    );
    await teardown.run();
    assert.ok(!existsSync(userData), 'no user plugin folder');
    assert.ok(!existsSync(join(home, 'run-bad')), 'no runtime directory');
  }
});
