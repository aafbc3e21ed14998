// A cancel that loses the race to the running call's answer: the worker finishes the call between
// the handle's "is it running?" look and its settling of what the worker answered. The call keeps
// its answer, the worker stays, and the call posted behind it still settles. (Before 7f9ab2b the
// handle spliced index -1, dropping the last call posted, which then never settled, and stopped
// the worker for nothing.) The worker really runs on; the test only holds the main thread at that
// one point, as a busy event loop would, until the worker has answered. Likewise a cancel that comes
// after the worker answered, before the main thread took the answer (a busy turn: a client's close
// read in the same poll): the call ran to its end and keeps its answer, not 'cancelled before it
// started'.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { ModuleHandle } from '../../main/plugins/index.js';
import { DONE } from '../../main/plugins/worker/call-channel.js';
import { running } from '../helpers/running-call.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

let fx: LoadedFixtures;
before(async () => {
  fx = await loadFixtures([{ name: 'slow', kind: 'slow' }]);
  assert.deepEqual(fx.report.failed, []);
});
after(() => fx.close());

interface ChannelView {
  ints: Int32Array;
  isRunning(seq: number): boolean;
}

it('the running call answered just as it is cancelled keeps its answer; the call behind it still settles, no restart', { timeout: 180_000 }, async () => {
  const slow: ModuleHandle = fx.registry.get('slow')!;
  const controller = new AbortController();
  const first = slow.invokeTool({ name: 'slow', argumentsJson: '100', callId: 'race-1' }, { signal: controller.signal });
  await running(slow, 'race-1', first);
  const behind = slow.invokeTool({ name: 'slow', argumentsJson: '300', callId: 'race-2' });
  await new Promise((resolve) => setImmediate(resolve)); // posted to the worker behind race-1

  const channel = (slow as unknown as { live: { channel: ChannelView } }).live.channel;
  const isRunning = channel.isRunning.bind(channel);
  channel.isRunning = (seq: number): boolean => {
    const answer = isRunning(seq);
    // Running when looked at: hold this thread until the worker has answered it.
    while (answer && Atomics.load(channel.ints, DONE) < seq) Atomics.wait(channel.ints, DONE, Atomics.load(channel.ints, DONE), 50);
    return answer;
  };
  const stopped = slow.stats.stopped;
  const restarts = slow.stats.restarts;
  try {
    controller.abort(new Error('the client went away'));
  } finally {
    delete (channel as Partial<ChannelView>).isRunning; // back to the prototype's
  }
  const firstOutcome = await first;
  assert.equal(firstOutcome.ok, true, 'the call finished before the cancel took effect: it keeps its answer');
  const behindOutcome = await behind;
  assert.equal(behindOutcome.ok, true, 'the call posted behind it settles');
  assert.equal(slow.stats.stopped, stopped, 'the worker was not stopped');
  assert.equal(slow.stats.restarts, restarts);
});

it('a call the worker has answered, its answer not yet taken when it is cancelled, keeps its answer: it ran, it was not "cancelled before it started"', { timeout: 60_000 }, async () => {
  const slow: ModuleHandle = fx.registry.get('slow')!;
  assert.equal((await slow.invokeTool({ name: 'echo', argumentsJson: '"warm"', callId: 'warm' })).ok, true); // the engine is up
  const cancelled = slow.stats.cancelled;
  const restarts = slow.stats.restarts;
  for (const ms of ['0', '5']) {
    const controller = new AbortController();
    const call = slow.invokeTool({ name: 'slow', argumentsJson: ms, callId: `answered-${ms}` }, { signal: controller.signal });
    // A lone call is posted at once. Hold this thread, as a busy turn would, until the worker has answered it.
    const live = (slow as unknown as { live: { posted: number; channel: ChannelView } }).live;
    const ints = live.channel.ints;
    while (Atomics.load(ints, DONE) < live.posted) Atomics.wait(ints, DONE, Atomics.load(ints, DONE), 50);
    controller.abort(new Error('the client went away'));
    const outcome = await call.catch((err: Error) => err.message);
    assert.deepEqual(outcome, { ok: true, value: { content: ms, usage: undefined } }, 'answered before the cancel: the answer, not a cancel');
  }
  assert.equal(slow.stats.cancelled, cancelled, 'no call counted cancelled');
  assert.equal(slow.stats.restarts, restarts, 'the worker was not stopped');
  assert.deepEqual(await slow.invokeTool({ name: 'echo', argumentsJson: '"next"', callId: 'next' }), { ok: true, value: { content: '"next"', usage: undefined } });
});
