import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PluginCallError } from '../../main/plugins/index.js';
import { MAX_WAITING_CALLS } from '../../main/plugins/limits.js';
import { SLOTS } from '../../main/plugins/worker/call-channel.js';
import { running } from '../helpers/running-call.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

describe('a module holding its cap of waiting calls (MAX_WAITING_CALLS) refuses the next one busy', () => {
  let fx: LoadedFixtures;
  before(async () => {
    fx = await loadFixtures([{ name: 'slow', kind: 'slow' }]);
    assert.deepEqual(fx.report.failed, []);
  });
  after(() => fx.close());

  it('the call past the cap is refused busy at once; every earlier call is answered with its own arguments', { timeout: 180_000 }, async () => {
    const slow = fx.registry.get('slow')!;
    const call = (name: string, args: string, callId: string) => slow.invokeTool({ name, argumentsJson: args, callId });
    // A running call holds the worker, so everything behind it waits: SLOTS posted ahead, the rest queued.
    const first = call('slow', '2000', 'first');
    await running(slow, 'first', first);
    const behind = Array.from({ length: SLOTS - 1 + MAX_WAITING_CALLS }, (_, i) => call('echo', JSON.stringify(`call ${i}`), `behind-${i}`));
    assert.equal(slow.queued, SLOTS - 1 + MAX_WAITING_CALLS);

    let refusedAt: number | undefined;
    const refused = call('echo', '"one too many"', 'refused').catch((err: unknown) => {
      refusedAt = slow.queued;
      throw err;
    });
    await assert.rejects(refused, (err: unknown) => {
      assert.ok(err instanceof PluginCallError);
      assert.equal(err.kind, 'busy');
      assert.equal(err.module, 'slow');
      assert.equal(err.message, `busy: module slow has ${MAX_WAITING_CALLS} calls waiting; try again later`);
      return true;
    });
    assert.equal(refusedAt, SLOTS - 1 + MAX_WAITING_CALLS, 'refused while the first call still ran');
    assert.equal(slow.stats.busy, 1);

    assert.equal((await first).ok, true);
    const answers = await Promise.all(behind);
    answers.forEach((answer, i) => assert.deepEqual(answer, { ok: true, value: { content: JSON.stringify(`call ${i}`), usage: undefined } }));
    // Room again: the next call is served.
    assert.deepEqual(await call('echo', '"after"', 'after'), { ok: true, value: { content: '"after"', usage: undefined } });
    assert.equal(slow.stats.busy, 1);
  });
});

describe('the waiting-calls cap with a credit meter', () => {
  let fx: LoadedFixtures;
  let admitted = 0;
  before(async () => {
    fx = await loadFixtures([{ name: 'slow', kind: 'slow' }], {
      meter: {
        admit() {
          admitted++;
          return true;
        },
      },
    });
    assert.deepEqual(fx.report.failed, []);
  });
  after(() => fx.close());

  it('a burst asked of the meter at once holds its places there: the calls past the cap are refused busy before the meter, every admitted call is answered', { timeout: 180_000 }, async () => {
    const slow = fx.registry.get('slow')!;
    const call = (name: string, args: string, callId: string) => slow.invokeTool({ name, argumentsJson: args, callId });
    const first = call('slow', '2000', 'first');
    await running(slow, 'first', first);
    const before = admitted;
    // As many as fit without a meter (SLOTS - 1 posted ahead, MAX_WAITING_CALLS queued), plus one: the
    // calls at the meter count as waiting (they may not all find a slot), so the last SLOTS are refused.
    const burst = Array.from({ length: SLOTS - 1 + MAX_WAITING_CALLS + 1 }, (_, i) => call('echo', JSON.stringify(`call ${i}`), `burst-${i}`));
    const outcomes = await Promise.allSettled(burst);
    assert.equal(admitted - before, MAX_WAITING_CALLS, 'the meter saw only the calls that held a place');
    outcomes.slice(MAX_WAITING_CALLS).forEach((o) => {
      assert.equal(o.status, 'rejected');
      assert.ok((o as PromiseRejectedResult).reason instanceof PluginCallError);
      assert.equal(((o as PromiseRejectedResult).reason as PluginCallError).kind, 'busy');
    });
    outcomes.slice(0, MAX_WAITING_CALLS).forEach((o, i) => assert.deepEqual(o, { status: 'fulfilled', value: { ok: true, value: { content: JSON.stringify(`call ${i}`), usage: undefined } } }));
    assert.equal((await first).ok, true);
    assert.equal(slow.stats.busy, SLOTS);
  });
});
