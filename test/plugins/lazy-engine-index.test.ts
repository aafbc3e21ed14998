import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ModuleHandle } from '../../main/plugins/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { unixRequest } from '../helpers/http.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

/**
 * The gateway's `GET /` lists every plugin from what the load recorded (its manifest and the
 * tools recorded by digest): asking it, however often, starts no engine (issue 21 item 1).
 */

const NAMES = ['idle-a', 'idle-b', 'idle-c', 'idle-d', 'idle-e'];

/** Resolves once `condition` holds (checked every turn of the event loop); fails after 10 s. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > 10_000) assert.fail(`still waiting for: ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("the lazy engine: the gateway's GET / with idle plugins", () => {
  let fx: LoadedFixtures;
  let gw: RunningGateway;
  const handles = (): ModuleHandle[] => NAMES.map((n) => fx.registry.get(n)!);

  before(async () => {
    fx = await loadFixtures(NAMES.map((name) => ({ name, kind: 'echo' as const })));
    assert.deepEqual(fx.report.failed, []);
    gw = await startGateway(fx.registry);
    // A load that had no record listed the tools with the engine and is stopping it: wait for that.
    await until(() => handles().every((h) => h.engineState === 'stopped'), 'every engine stopped after the load');
  });
  after(async () => {
    await gw.close();
    await fx.close();
  });

  it(`lists all ${NAMES.length} plugins, asked three times, and starts none of their engines`, async () => {
    const starts = handles().map((h) => h.stats.engineStarts);
    for (let i = 0; i < 3; i++) {
      const index = await unixRequest(gw.socketPath, { headers: gw.auth });
      assert.equal(index.status, 200);
      const body = JSON.parse(index.body) as { modules: { name: string; surfaces: string[] }[] };
      assert.deepEqual(body.modules.map((m) => m.name), NAMES);
      assert.deepEqual(body.modules[0]!.surfaces, ['/mcp/idle-a', '/mcp/idle-a/sse']);
    }
    assert.deepEqual(handles().map((h) => h.engineState), NAMES.map(() => 'stopped'));
    assert.deepEqual(handles().map((h) => h.stats.engineStarts), starts, 'no worker thread was started');
  });

  it('a call to one of them starts that engine alone (the counts above do see a start)', async () => {
    const [first, ...rest] = handles();
    const starts = handles().map((h) => h.stats.engineStarts);
    const outcome = await first!.invokeTool({ name: 'echo', argumentsJson: '"x"', callId: 'c1' });
    assert.equal(outcome.ok, true, JSON.stringify(outcome));
    assert.equal(first!.engineState, 'running');
    assert.equal(first!.stats.engineStarts, starts[0]! + 1);
    assert.deepEqual(rest.map((h) => h.stats.engineStarts), starts.slice(1));
    const index = await unixRequest(gw.socketPath, { headers: gw.auth });
    assert.equal(index.status, 200);
    assert.deepEqual(rest.map((h) => h.engineState), rest.map(() => 'stopped'));
  });
});
