// A cancel that loses the race to the running call's answer: the worker finishes the call between
// the handle's "is it running?" look and its settling of what the worker answered. The call keeps
// its answer, the worker stays, and the call posted behind it still settles. (Before 7f9ab2b the
// handle spliced index -1, dropping the last call posted, which then never settled, and stopped
// the worker for nothing.) The worker really runs on; the test only holds the main thread at that
// one point, as a busy event loop would, until the worker has answered.
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
