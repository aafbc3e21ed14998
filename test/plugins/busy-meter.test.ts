import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PluginCallError } from '../../main/plugins/index.js';
import { MAX_WAITING_CALLS } from '../../main/plugins/limits.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

/**
 * Calls being asked of a slow credit meter hold their arguments as much as queued ones do, and a
 * call the meter admitted must not then be refused `busy` (the meter counted it; it never ran).
 */
describe('the waiting-calls cap counts the calls the credit meter is still being asked about', () => {
  let fx: LoadedFixtures;
  let asked = 0;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  before(async () => {
    fx = await loadFixtures([{ name: 'echo', kind: 'echo' }], {
      meter: {
        async admit() {
          asked++;
          await gate;
          return true;
        },
      },
    });
    assert.deepEqual(fx.report.failed, []);
  });
  after(() => fx.close());

  it('past the cap a call is refused busy while the meter is still pending, never shown to it; every admitted call is answered', async () => {
    const echo = fx.registry.get('echo')!;
    const extra = 20;
    const outcomes = Array.from({ length: MAX_WAITING_CALLS + extra }, (_, i) =>
      echo.invokeTool({ name: 'echo', argumentsJson: JSON.stringify(`call ${i}`), callId: `c${i}` }).then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
    );
    // The meter has not answered anyone: the calls past the cap are refused now, not after it.
    const early = await Promise.race([Promise.all(outcomes.slice(MAX_WAITING_CALLS)), new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')))]);
    assert.notEqual(early, 'pending', 'the calls past the cap were held at the meter');
    for (const outcome of early as { error?: unknown }[]) {
      assert.ok(outcome.error instanceof PluginCallError && outcome.error.kind === 'busy', String(outcome.error));
    }
    assert.equal(asked, MAX_WAITING_CALLS, 'the meter saw only the calls that fit');

    open();
    const admitted = await Promise.all(outcomes.slice(0, MAX_WAITING_CALLS));
    admitted.forEach((outcome, i) => assert.deepEqual(outcome, { value: { ok: true, value: { content: JSON.stringify(`call ${i}`), usage: undefined } } }));
    assert.equal(echo.stats.busy, extra);
  });
});
