import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { StartWaitError } from '../../main/plugins/handle/index.js';
import { PluginCallError } from '../../main/plugins/index.js';
import { spinningStart, type SpinningStart } from '../helpers/spinning-start.js';

/**
 * A client whose calls time out before the instantiation limit (and cancel) would otherwise keep
 * a component whose top-level code spins starting at every call, holding a start turn each time,
 * without the start ever running out of time and so without the wait. Limit here: 300 ms.
 */
const INSTANTIATE_MS = 300;
/** Each call is cancelled this long after its start began instantiating: well inside the limit. */
const CANCEL_AFTER_MS = 120;

/** One turn of the event loop (polling, no timer). */
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('starts that end without becoming ready, abandoned or failed, count toward the wait after a start that runs out of time', () => {
  let fx: SpinningStart;
  before(async () => {
    fx = await spinningStart('chatty-start-retry-cancelled-');
  });
  after(() => fx.close());

  it('calls each cancelled while the start spins: once those starts have spun as long as the limit, the next call is refused with the wait, starting nothing', async () => {
    let compiles = 0;
    let compiledAt = 0;
    const handle = fx.handle({
      instantiateTimeoutMs: INSTANTIATE_MS,
      compile: async () => {
        compiles++;
        compiledAt = performance.now();
        return fx.spinning;
      },
    });
    let refused: unknown;
    for (let i = 0; i < 6 && refused === undefined; i++) {
      const abort = new AbortController();
      const before = compiles;
      let settled = false;
      const outcome = handle.invokeTool({ name: 'echo', argumentsJson: '"x"', callId: `c${i}` }, { signal: abort.signal }).catch((err: unknown) => err);
      void outcome.then(() => (settled = true));
      // Until its start has instantiated for CANCEL_AFTER_MS (or the call was refused without one).
      while (!settled && (compiles === before || performance.now() - compiledAt < CANCEL_AFTER_MS)) await tick();
      abort.abort();
      const err = await outcome;
      assert.ok(err instanceof PluginCallError, String(err));
      if (err instanceof StartWaitError) refused = err;
      else assert.equal(err.kind, 'cancelled', err.message);
      while (handle.engineState === 'starting') await tick(); // the abandoned start settles
    }
    assert.ok(refused instanceof StartWaitError, 'every call started the spinning component again');
    assert.match(refused.message, /could not start: its starts ran \d+ ms in all without becoming ready \(the last: given up when its calls were cancelled\); it is tried again in (0\.\d|1\.0) s$/);
    assert.ok(compiles <= Math.ceil(INSTANTIATE_MS / CANCEL_AFTER_MS), `${compiles} starts`);
  });
  it('starts that each fail after holding their turn a while (a compile that fails after 120 ms here; a component that spins, then traps, in its start): once they add up to the limit, the next call is refused with the wait', async () => {
    let compiles = 0;
    const handle = fx.handle({
      instantiateTimeoutMs: INSTANTIATE_MS,
      compile: async () => {
        compiles++;
        // Stands for the start's own work, which holds the turn: not a wait for a race.
        await new Promise((resolve) => setTimeout(resolve, CANCEL_AFTER_MS));
        throw new Error('the component is broken');
      },
    });
    const outcomes: unknown[] = [];
    for (let i = 0; i < 6 && !(outcomes.at(-1) instanceof StartWaitError); i++) {
      outcomes.push(await handle.invokeTool({ name: 'echo', argumentsJson: '"x"', callId: `f${i}` }).catch((err: unknown) => err));
    }
    const last = outcomes.at(-1);
    assert.ok(last instanceof StartWaitError, `every call started again: ${String(last)}`);
    assert.match(last.message, /could not start: .*its starts ran \d+ ms in all without becoming ready \(the last: the component is broken\); it is tried again in 1\.0 s$/);
    const started = compiles;
    assert.ok(started <= Math.ceil(INSTANTIATE_MS / CANCEL_AFTER_MS), `${started} starts`);
    // During the wait: refused at once, nothing compiled.
    await assert.rejects(handle.invokeTool({ name: 'echo', argumentsJson: '"x"', callId: 'during' }), (err: unknown) => err instanceof StartWaitError);
    assert.equal(compiles, started);
  });
});
