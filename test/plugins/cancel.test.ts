import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PluginCallError, type ModuleHandle } from '../../main/plugins/index.js';
import { running } from '../helpers/running-call.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

const isCancelled = (pattern: RegExp) => (err: unknown) => err instanceof PluginCallError && err.kind === 'cancelled' && pattern.test(err.message);

describe('cancelling a plugin call (ModuleHandle.invokeTool with a signal)', () => {
  let fx: LoadedFixtures;
  const get = (name: string): ModuleHandle => fx.registry.get(name)!;
  const call = (handle: ModuleHandle, name: string, argumentsJson: string, callId: string, signal?: AbortSignal) =>
    handle.invokeTool({ name, argumentsJson, callId }, { signal });

  before(async () => {
    fx = await loadFixtures([
      { name: 'loop', kind: 'loop' },
      { name: 'slow', kind: 'slow' },
      { name: 'echo', kind: 'echo' },
    ]);
    assert.deepEqual(fx.report.failed, []);
  });
  after(() => fx.close());

  it('stops a spinning guest at once; the next call gets a fresh instance; another module never waits', async () => {
    const loop = get('loop');
    const echo = get('echo');
    // Its engine answers a call first: a start whose engine answered nothing before a cancel
    // stopped it counts as unready, and on a loaded machine (load 15 and more) the first start's
    // turn can run to the instantiation limit, so the call after the cancel would be refused to
    // wait (start-retry's rule, tested there), not served by a fresh instance as this test says.
    assert.deepEqual(await call(loop, 'echo', '"warm"', 'warm-1'), { ok: true, value: { content: '"warm"', usage: undefined } });
    const restarts = loop.stats.restarts;
    const controller = new AbortController();
    const spinning = call(loop, 'loop', '{}', 'spin-1', controller.signal);
    await running(loop, 'spin-1', spinning);

    // Another module answers while this one spins.
    const otherStarted = performance.now();
    assert.deepEqual(await call(echo, 'echo', '"meanwhile"', 'other-1'), { ok: true, value: { content: '"meanwhile"', usage: undefined } });
    const otherMs = performance.now() - otherStarted;

    const abortedAt = performance.now();
    controller.abort(new Error('the client went away'));
    await assert.rejects(spinning, isCancelled(/tool 'loop' was cancelled while it ran; its instance was stopped: the client went away/));
    const rejectMs = performance.now() - abortedAt;
    const stopped = await waitForLog(fx, /tool 'loop' was cancelled while it ran; its instance stopped in/);
    const stopMs = stopped.fields?.['stopMs'];
    assert.equal(typeof stopMs, 'number');
    console.log(`# cancel: rejected ${rejectMs.toFixed(1)} ms after abort; the spinning worker stopped in ${String(stopMs)} ms; another module answered in ${otherMs.toFixed(1)} ms meanwhile`);

    assert.deepEqual(await call(loop, 'echo', '"after"', 'after-1'), { ok: true, value: { content: '"after"', usage: undefined } });
    assert.equal(loop.stats.restarts, restarts + 1);
    assert.equal(loop.stats.stopped, 1);
    assert.equal(loop.stats.timeouts, 0);
  });

  it('a call posted behind a running one is skipped by the worker, without a restart', async () => {
    const slow = get('slow');
    const restarts = slow.stats.restarts;
    const first = call(slow, 'slow', '150', 'slow-1');
    await running(slow, 'slow-1', first);
    const controller = new AbortController();
    const skipped = call(slow, 'log', '"should never be logged"', 'log-1', controller.signal);
    const next = call(slow, 'echo', '"next"', 'echo-1');
    controller.abort();
    await assert.rejects(skipped, isCancelled(/tool 'log' was cancelled before it started$/));
    assert.equal((await first).ok, true);
    assert.deepEqual(await next, { ok: true, value: { content: '"next"', usage: undefined } });
    assert.equal(slow.stats.restarts, restarts, 'the instance was kept');
    assert.ok(!fx.logs.some((l) => l.message.includes('should never be logged')), 'the guest never ran it');
  });

  it('a call still waiting for the module (behind eight posted ones) is taken out of the queue', async () => {
    const slow = get('slow');
    const ahead = Array.from({ length: 8 }, (_, i) => call(slow, 'slow', '20', `ahead-${i}`));
    const controller = new AbortController();
    const queued = call(slow, 'log', '"queued, never run"', 'queued-1', controller.signal);
    assert.equal(slow.queued >= 8, true);
    controller.abort();
    await assert.rejects(queued, isCancelled(/tool 'log' was cancelled while it was queued$/));
    for (const result of await Promise.all(ahead)) assert.equal(result.ok, true);
    assert.ok(!fx.logs.some((l) => l.message.includes('queued, never run')));
  });

  it('an already aborted signal never reaches the module', async () => {
    const echo = get('echo');
    const calls = echo.stats.calls;
    await assert.rejects(call(echo, 'echo', '"x"', 'dead-1', AbortSignal.abort()), isCancelled(/before it was queued$/));
    assert.equal(echo.stats.calls, calls);
  });

  it('aborting after the answer changes nothing', async () => {
    const echo = get('echo');
    const controller = new AbortController();
    assert.deepEqual(await call(echo, 'echo', '"done"', 'late-1', controller.signal), { ok: true, value: { content: '"done"', usage: undefined } });
    controller.abort();
    assert.deepEqual(await call(echo, 'echo', '"again"', 'late-2'), { ok: true, value: { content: '"again"', usage: undefined } });
    assert.equal(echo.stats.cancelled, 0);
  });
});

/** The registry's log line matching `pattern`, once it is written (it follows the worker's exit). */
async function waitForLog(fx: LoadedFixtures, pattern: RegExp): Promise<LoadedFixtures['logs'][number]> {
  for (;;) {
    const line = fx.logs.find((l) => pattern.test(l.message));
    if (line) return line;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
