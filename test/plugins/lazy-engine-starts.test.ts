import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CompiledComponent } from '../../main/plugins/component-cache.js';
import { ENGINE_START_LIMIT, enginesStarting } from '../../main/plugins/handle/engine-starts.js';
import { ModuleHandle, type ModuleHandleInit } from '../../main/plugins/handle/index.js';
import { PluginCallError, type ToolOutcome } from '../../main/plugins/index.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

/**
 * Engine starts that nobody wants any more: a handle closed, or every call waiting for the start
 * cancelled, while the start waits its turn or compiles; and a start that fails with many calls
 * waiting for it. The handles here run a real fixture component; only their `compile` step is
 * held (a gate the test opens), to stand for a start that takes long: the start turns of other
 * plugins, a component whose start runs long.
 */

const echoed = (text: string): ToolOutcome => ({ ok: true, value: { content: JSON.stringify(text), usage: undefined } });
const call = (handle: ModuleHandle, text: string, signal?: AbortSignal) =>
  handle.invokeTool({ name: 'echo', argumentsJson: JSON.stringify(text), callId: text }, { signal });

/** Resolves once `condition` holds (checked every turn of the event loop); fails after 60 s (a hang guard, not a speed check: a loaded machine may be slow). */
async function until(condition: () => boolean, what: string): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > 60_000) assert.fail(`still waiting for: ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Settles as `promise` does, recording when it has (so a test can wait for it, bounded). */
function watched<T>(promise: Promise<T>): { settled: () => boolean; result: Promise<PromiseSettledResult<T>> } {
  let done = false;
  const result = promise.then(
    (value): PromiseSettledResult<T> => ((done = true), { status: 'fulfilled', value }),
    (reason: unknown): PromiseSettledResult<T> => ((done = true), { status: 'rejected', reason }),
  );
  return { settled: () => done, result };
}

function kindOf(settled: PromiseSettledResult<unknown>): string {
  if (settled.status === 'fulfilled') return 'fulfilled';
  return settled.reason instanceof PluginCallError ? settled.reason.kind : String(settled.reason);
}

describe('the lazy engine: starts nobody wants any more', () => {
  let fx: LoadedFixtures;
  let init: ModuleHandleInit;
  const made: ModuleHandle[] = [];

  /** A handle of the loaded echo component whose compile step is `compile`. */
  function handle(compile: () => Promise<CompiledComponent>): ModuleHandle {
    const h = new ModuleHandle({ ...init, compile, toolRecord: undefined });
    made.push(h);
    return h;
  }

  /** `ENGINE_START_LIMIT` handles whose starts hold every start turn until `open()`. */
  async function holdEveryTurn(): Promise<{ open: () => void; holders: ModuleHandle[]; calls: Promise<PromiseSettledResult<ToolOutcome>>[] }> {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const holders = Array.from({ length: ENGINE_START_LIMIT }, () => handle(async () => (await gate, init.compile())));
    const calls = holders.map((h, i) => watched(call(h, `held${i}`)).result);
    await until(() => enginesStarting() === ENGINE_START_LIMIT, 'every start turn taken');
    return { open, holders, calls };
  }

  before(async () => {
    fx = await loadFixtures([{ name: 'echo', kind: 'echo' }]);
    assert.deepEqual(fx.report.failed, []);
    init = (fx.registry.get('echo') as unknown as { init: ModuleHandleInit }).init;
  });
  after(async () => {
    await Promise.all(made.map((h) => h.close()));
    await fx.close();
  });

  it("a handle closed while its start waits its turn, or compiles, closes at once: it waits for no other plugin's start, and starts nothing", async () => {
    const { open, holders, calls } = await holdEveryTurn();
    const late = handle(() => init.compile());
    const lateCall = watched(call(late, 'late'));
    await until(() => late.engineState === 'starting', 'the late start queued');
    const closing = watched(late.close());
    await until(closing.settled, "the close of a handle whose start waits for other plugins' starts");
    assert.equal(kindOf(await lateCall.result), 'unloaded');
    // One of those holding a turn, closed while it compiles: at once too, and its turn passes on.
    const holderClosing = watched(holders[0]!.close());
    await until(holderClosing.settled, 'the close of a handle whose start compiles');
    await until(() => enginesStarting() < ENGINE_START_LIMIT, 'the closed start giving up its turn');
    open();
    const outcomes = await Promise.all(calls);
    assert.equal(kindOf(outcomes[0]!), 'unloaded');
    for (const [i, outcome] of outcomes.entries()) if (i > 0) assert.deepEqual(outcome, { status: 'fulfilled', value: echoed(`held${i}`) });
    await until(() => enginesStarting() === 0, 'every start ended');
    assert.equal(late.engineState, 'stopped');
    assert.equal(holders[0]!.engineState, 'stopped');
  });

  it('a call cancelled while the start it set off waits its turn gives the turn up: no engine starts for nobody, and the next call starts one and succeeds', async () => {
    const { open, calls } = await holdEveryTurn();
    const lone = handle(() => init.compile());
    const abort = new AbortController();
    const cancelledCall = watched(call(lone, 'gone', abort.signal));
    await until(() => lone.engineState === 'starting', 'the lone start queued');
    abort.abort();
    assert.equal(kindOf(await cancelledCall.result), 'cancelled');
    await until(() => lone.engineState === 'stopped', 'the unwanted start abandoned');
    open();
    await Promise.all(calls);
    await until(() => enginesStarting() === 0, 'every start ended');
    assert.equal(lone.engineState, 'stopped', 'an engine was started for a call that was cancelled');
    assert.deepEqual(await call(lone, 'next'), echoed('next'));
    assert.equal(lone.engineState, 'running');
  });

  it('a call cancelled while its engine instantiates (compiled, the worker starting) ends that worker: no engine is left for nobody, and the next call succeeds', async () => {
    let compiled = false;
    const lone = handle(async () => {
      const done = await init.compile();
      compiled = true;
      return done;
    });
    const abort = new AbortController();
    const cancelledCall = watched(call(lone, 'gone', abort.signal));
    await until(() => compiled, 'the compile done, the worker started');
    assert.equal(lone.engineState, 'starting');
    abort.abort();
    assert.equal(kindOf(await cancelledCall.result), 'cancelled');
    await until(() => lone.engineState !== 'starting', 'the start settled');
    assert.equal(lone.engineState, 'stopped', 'a worker was left running for a call that was cancelled');
    assert.deepEqual(await call(lone, 'next'), echoed('next'));
  });

  it('one of two calls waiting for a start cancelled: the start goes on for the other, which succeeds', async () => {
    const { open, calls } = await holdEveryTurn();
    const two = handle(() => init.compile());
    const abort = new AbortController();
    const cancelledCall = watched(call(two, 'gone', abort.signal));
    const kept = call(two, 'kept');
    abort.abort();
    assert.equal(kindOf(await cancelledCall.result), 'cancelled');
    assert.equal(two.engineState, 'starting');
    open();
    await Promise.all(calls);
    assert.deepEqual(await kept, echoed('kept'));
  });

  it('a start that fails fails every call waiting for it at once, tried once; the next call tries again and succeeds', async () => {
    let compiles = 0;
    let failing = true;
    const flaky = handle(() => {
      compiles++;
      return failing ? Promise.reject(new Error('no memory for the compile')) : init.compile();
    });
    const outcomes = await Promise.allSettled([call(flaky, 'a'), call(flaky, 'b'), call(flaky, 'c')]);
    assert.deepEqual(outcomes.map(kindOf), ['crashed', 'crashed', 'crashed']);
    assert.match(String((outcomes[2] as PromiseRejectedResult).reason), /could not start: no memory for the compile/);
    assert.equal(compiles, 1, 'each waiting call set off a start of its own');
    assert.equal(flaky.stats.engineStarts, 1);
    failing = false;
    assert.deepEqual(await call(flaky, 'd'), echoed('d'));
  });
});
