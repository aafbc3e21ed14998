import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PluginCallError } from '../../main/plugins/index.js';
import { MAX_WAITING_ARGUMENT_BYTES, MIB } from '../../main/plugins/limits.js';
import { SLOTS } from '../../main/plugins/worker/call-channel.js';
import { running } from '../helpers/running-call.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

/**
 * A request body may be 10 MiB: 256 waiting calls of that size would hold gigabytes. The waiting
 * calls' arguments are capped too (`MAX_WAITING_ARGUMENT_BYTES`), a lone call always fitting.
 */
describe("a module's waiting calls are capped by the size of their arguments too", () => {
  let fx: LoadedFixtures;
  before(async () => {
    fx = await loadFixtures([{ name: 'slow', kind: 'slow' }]);
    assert.deepEqual(fx.report.failed, []);
  });
  after(() => fx.close());

  it('a call whose arguments would take the waiting ones past the cap is refused busy at once; those that fit all run', async () => {
    const slow = fx.registry.get('slow')!;
    const first = slow.invokeTool({ name: 'slow', argumentsJson: '2000', callId: 'first' });
    await running(slow, 'first', first);
    // The calls posted ahead are not waiting: fill those slots with small calls.
    const posted = Array.from({ length: SLOTS - 1 }, (_, i) => slow.invokeTool({ name: 'echo', argumentsJson: '"small"', callId: `posted-${i}` }));
    const size = 9 * MIB;
    const fit = Math.floor(MAX_WAITING_ARGUMENT_BYTES / size);
    const big = (i: number) => JSON.stringify(String(i).padEnd(size - 2, '.'));
    const outcomes = Array.from({ length: fit + 2 }, (_, i) =>
      slow.invokeTool({ name: 'echo', argumentsJson: big(i), callId: `big-${i}` }).then(
        () => 'answered',
        (err: unknown) => (err instanceof PluginCallError ? err.kind : String(err)),
      ),
    );
    const refused = await Promise.race([Promise.all(outcomes.slice(fit)), new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')))]);
    assert.deepEqual(refused, ['busy', 'busy'], 'refused while the first call still ran');
    assert.equal(slow.stats.busy, 2);
    // A small call still fits under the byte cap.
    const small = slow.invokeTool({ name: 'echo', argumentsJson: '"fits"', callId: 'fits' });

    assert.equal((await first).ok, true);
    assert.equal((await Promise.all(posted)).length, SLOTS - 1);
    // Each big call ran: its echo is over the 1 MiB output cap, which is its own answer, not a refusal.
    assert.deepEqual(await Promise.all(outcomes.slice(0, fit)), Array(fit).fill('output_too_large'));
    assert.deepEqual(await small, { ok: true, value: { content: '"fits"', usage: undefined } });
  });

  it('a lone call is never refused for its size', async () => {
    const slow = fx.registry.get('slow')!;
    const huge = JSON.stringify('x'.repeat(MAX_WAITING_ARGUMENT_BYTES + 1));
    await assert.rejects(slow.invokeTool({ name: 'echo', argumentsJson: huge, callId: 'huge' }), (err: unknown) => err instanceof PluginCallError && err.kind === 'output_too_large');
  });
});
