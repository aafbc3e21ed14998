import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { ANSWER_SPIN_MS, AnswerSpin, checkedAnswerSpinMs, turnSpins, type SpinWaiter } from '../../main/plugins/handle/answer-spin.js';
import { ModuleHandle, type ModuleHandleInit } from '../../main/plugins/handle/index.js';
import { ModuleRegistry, type ToolOutcome } from '../../main/plugins/index.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

/**
 * The main thread's short wait for a lone call's answer (issue 21: concurrency 1): bounded by its
 * budget, backing off from a module whose answers come later, and never in the way of a call's
 * answer. The end-of-turn wait (`turnSpins`) on a shared counter; then handles of a real fixture component.
 */

const ok = (content: string): ToolOutcome => ({ ok: true, value: { content, usage: undefined } });

/**
 * One lone call's wait through the process's end-of-turn waits (`turnSpins`), as a module's engine
 * makes it: true if `ints[0]` moved from `value` within `spin`'s budget; false if it did not, or at
 * once if the backoff skips this call.
 */
function waitOnce(spin: AnswerSpin, ints: Int32Array, value: number): Promise<boolean> {
  return new Promise((resolve) => {
    turnSpins.add({
      spinStarts: () => spin.takes() || (resolve(false), false),
      spinAnswered: () => Atomics.load(ints, 0) !== value,
      spinEnds: (caught) => {
        if (caught) spin.hit();
        else spin.miss();
        resolve(caught);
      },
      spinBudgetMs: spin.budgetMs,
    });
  });
}

describe('AnswerSpin: the bounded wait and its backoff', () => {
  const never = new Int32Array(new SharedArrayBuffer(8)); // a counter nobody moves

  it('takes a value that already moved at once, and counts it caught', async () => {
    const spin = new AnswerSpin(1000);
    const moved = new Int32Array(new SharedArrayBuffer(8));
    Atomics.store(moved, 0, 1);
    assert.equal(await waitOnce(spin, moved, 0), true);
    assert.deepEqual([spin.caught, spin.missed], [1, 0]);
  });

  it('gives up at its budget, not before, and then skips 1, 2, 4… lone calls without waiting, up to 256', async () => {
    const spin = new AnswerSpin(2);
    const started = performance.now();
    assert.equal(await waitOnce(spin, never, 0), false);
    assert.ok(performance.now() - started >= 2, 'waited its budget');
    const pattern: boolean[] = [];
    let spun = 0;
    // After each miss, the calls the backoff skips return at once and are not counted.
    for (let i = 0; i < 12; i++) {
      const before = spin.missed;
      await waitOnce(spin, never, 0);
      pattern.push(spin.missed > before);
      if (spin.missed > before) spun++;
    }
    // Missed at call 0; then skip 1, wait (miss), skip 2, wait, skip 4, wait: calls 2, 5, 10 of these 12 wait.
    assert.deepEqual(pattern.flatMap((waited, i) => (waited ? [i] : [])), [1, 4, 9]);
    assert.equal(spin.missed, 1 + spun);
    assert.equal(spin.caught, 0);
  });

  it('the backoff never skips more than 256 lone calls in a row', async () => {
    const spin = new AnswerSpin(0.01);
    let waits = 0;
    let sinceLast = 0;
    let longest = 0;
    for (let i = 0; i < 5000; i++) {
      const before = spin.missed;
      await waitOnce(spin, never, 0);
      if (spin.missed > before) {
        waits++;
        longest = Math.max(longest, sinceLast);
        sinceLast = 0;
      } else sinceLast++;
    }
    assert.equal(longest, 256);
    assert.ok(waits >= 5000 / 257, `${waits} waits in 5000 calls`);
  });

  it('one answer caught in time ends the backoff: the next lone call is waited for', async () => {
    const spin = new AnswerSpin(0.01);
    for (let i = 0; i < 40; i++) await waitOnce(spin, never, 0); // misses: the backoff is at 16 or more
    const moved = new Int32Array(new SharedArrayBuffer(8));
    Atomics.store(moved, 0, 1);
    while (!await waitOnce(spin, moved, 0)) {
      // the calls the backoff still skips
    }
    const missed = spin.missed;
    assert.equal(await waitOnce(spin, never, 0), false);
    assert.equal(spin.missed, missed + 1, 'waited (and missed) at once, no call skipped');
    assert.equal(await waitOnce(spin, never, 0), false);
    assert.equal(spin.missed, missed + 1, 'then skips one, as after a first miss');
  });

  it('a budget of 0 never waits', async () => {
    const spin = new AnswerSpin(0);
    const moved = new Int32Array(new SharedArrayBuffer(8));
    Atomics.store(moved, 0, 1);
    assert.equal(await waitOnce(spin, moved, 0), false);
    assert.deepEqual([spin.caught, spin.missed], [0, 0]);
  });

  it('answerSpinMs: absent is 80 µs (0 on one CPU); anything but 0..1000 ms is refused by name', () => {
    assert.equal(checkedAnswerSpinMs(undefined), availableParallelism() > 1 ? ANSWER_SPIN_MS : 0);
    assert.equal(ANSWER_SPIN_MS, 0.08);
    assert.equal(checkedAnswerSpinMs(0), 0);
    assert.equal(checkedAnswerSpinMs(1000), 1000);
    for (const bad of [-1, 1000.5, Number.NaN, Number.POSITIVE_INFINITY, '1' as unknown as number]) {
      assert.throws(() => checkedAnswerSpinMs(bad), (err: unknown) => err instanceof RangeError && /^answerSpinMs must be a number of milliseconds from 0/.test(err.message), String(bad));
    }
  });
});

describe("a module handle's wait for a lone call's answer", () => {
  let fx: LoadedFixtures;
  let init: ModuleHandleInit;
  const made: ModuleHandle[] = [];

  /** A handle of the loaded `slow` fixture (its `slow` tool busy-waits the milliseconds it is given). */
  function handle(answerSpinMs: number): ModuleHandle {
    const h = new ModuleHandle({ ...init, answerSpinMs, toolRecord: undefined });
    made.push(h);
    return h;
  }
  const slow = (h: ModuleHandle, ms: number): Promise<ToolOutcome> => h.invokeTool({ name: 'slow', argumentsJson: String(ms), callId: `slow-${ms}` });

  before(async () => {
    fx = await loadFixtures([{ name: 'slow', kind: 'slow', extra: '[resources]\nmax_execution_ms = 20000\n' }]);
    assert.deepEqual(fx.report.failed, []);
    init = (fx.registry.get('slow') as unknown as { init: ModuleHandleInit }).init;
  });
  after(async () => {
    await Promise.all(made.map((h) => h.close()));
    await fx.close();
  });

  it('takes a lone call answered within the budget without going back to the event loop for it', async () => {
    // The longest budget allowed, far past a 1 ms call even on a loaded machine: every lone call here is caught.
    const h = handle(1000);
    assert.deepEqual(await slow(h, 0), ok('0')); // the engine is up
    const caught = h.answerWaits.caught;
    for (let i = 1; i <= 3; i++) assert.deepEqual(await slow(h, 1), ok('1'));
    assert.deepEqual(h.answerWaits, { budgetMs: 1000, caught: caught + 3, missed: 0 });
  });

  it("never holds the main thread past its budget: a timer due now fires while a long call runs, and the call's answer still comes", async () => {
    const h = handle(20);
    assert.deepEqual(await slow(h, 0), ok('0'));
    const order: string[] = [];
    const answer = slow(h, 1500).then((r) => (order.push('answer'), r));
    setTimeout(() => order.push('timer'), 0);
    assert.deepEqual(await answer, ok('1500'));
    // Were the wait not bounded, the main thread would have spun until the answer, then run the timer.
    assert.deepEqual(order, ['timer', 'answer']);
    assert.equal(h.answerWaits.missed, 1);
  });

  it('after a miss, the next lone call goes to the event loop at once; the one after is waited for again', async () => {
    const h = handle(20);
    // Until a lone call is caught in time: the backoff is then clear (a fresh engine's first call, on a loaded machine, may miss and skip the next).
    for (let tries = 0; ; tries++) {
      const caught = h.answerWaits.caught;
      assert.deepEqual(await slow(h, 0), ok('0'));
      if (h.answerWaits.caught > caught) break;
      assert.ok(tries < 1000, 'a 0 ms call caught within 20 ms at least once');
    }
    const waits = (): number => h.answerWaits.caught + h.answerWaits.missed;
    const missed = h.answerWaits.missed;
    assert.deepEqual(await slow(h, 300), ok('300'));
    assert.equal(h.answerWaits.missed, missed + 1);
    const before = waits();
    assert.deepEqual(await slow(h, 300), ok('300'));
    assert.equal(waits(), before, 'skipped: not waited for');
    assert.deepEqual(await slow(h, 300), ok('300'));
    assert.equal(waits(), before + 1, 'waited for (and missed)');
  });

  it('calls posted together are not lone: the main thread does not wait for the first of them, and each gets its own answer', async () => {
    const h = handle(1000);
    assert.deepEqual(await slow(h, 0), ok('0'));
    const order: string[] = [];
    const answers = [600, 1, 1].map((ms, i) => slow(h, ms).then((r) => (order.push(`answer ${i}`), r)));
    setTimeout(() => order.push('timer'), 0);
    assert.deepEqual(await Promise.all(answers), [ok('600'), ok('1'), ok('1')]);
    // Waiting for the first answer with three calls in flight would hold the main thread 600 ms, the timer after it.
    assert.deepEqual(order, ['timer', 'answer 0', 'answer 1', 'answer 2']);
  });

  it('answerSpinMs 0 never waits; calls are answered through the event loop', async () => {
    const h = handle(0);
    for (let i = 0; i < 3; i++) assert.deepEqual(await slow(h, 1), ok('1'));
    assert.deepEqual(h.answerWaits, { budgetMs: 0, caught: 0, missed: 0 });
  });

  it("the registry's answerSpinMs reaches every module's handle; a bad one is refused when the registry is made", async () => {
    const own = await loadFixtures([{ name: 'echo', kind: 'echo' }], { answerSpinMs: 0.5 });
    try {
      assert.equal(own.registry.get('echo')?.answerWaits.budgetMs, 0.5);
    } finally {
      await own.close();
    }
    assert.equal(fx.registry.get('slow')?.answerWaits.budgetMs, availableParallelism() > 1 ? ANSWER_SPIN_MS : 0);
    assert.throws(() => new ModuleRegistry({ answerSpinMs: -0.5 }), /^RangeError: answerSpinMs must be a number of milliseconds from 0/);
  });
});

describe("the lone calls of several modules posted in one turn", () => {
  let fx: LoadedFixtures;
  const made: ModuleHandle[] = [];
  before(async () => {
    // The llm tool's provider answers 30 ms later, on the main thread: no wait can catch it, and the workers idle meanwhile.
    const late = (): Promise<{ content: string }> => new Promise((resolve) => setTimeout(() => resolve({ content: 'late' }), 30));
    fx = await loadFixtures([{ name: 'asks', kind: 'echo' }], { providers: { llm: { complete: late } } });
    assert.deepEqual(fx.report.failed, []);
  });
  after(async () => {
    await Promise.all(made.map((h) => h.close()));
    await fx.close();
  });

  it('are waited for together: the main thread waits one budget in that turn, not one a module', async () => {
    const init = (fx.registry.get('asks') as unknown as { init: ModuleHandleInit }).init;
    const modules = 8;
    const budgetMs = 20;
    for (let i = 0; i < modules; i++) made.push(new ModuleHandle({ ...init, answerSpinMs: budgetMs, toolRecord: undefined }));
    // Each module's last lone call caught in time (a loaded machine may make one miss): its next one is waited for.
    for (const h of made) {
      for (let tries = 0; ; tries++) {
        const caught = h.answerWaits.caught;
        assert.deepEqual(await h.invokeTool({ name: 'echo', argumentsJson: '{}', callId: 'warm' }), ok('{}'));
        if (h.answerWaits.caught > caught) break;
        assert.ok(tries < 50, 'an echo answered within 20 ms');
      }
    }
    const missed = made.map((h) => h.answerWaits.missed + 1);
    // Each wait as the turn's end makes it: every one starts before any ends, in one loop. One
    // after another (each its own), the waits held the main thread eight budgets (160 ms or more)
    // before anything else ran. The order, not a time a loaded machine could stretch, says which.
    const events: string[] = [];
    const add = turnSpins.add.bind(turnSpins);
    turnSpins.add = (w: SpinWaiter): void =>
      add({
        spinStarts: () => (events.push('start'), w.spinStarts()),
        spinAnswered: () => w.spinAnswered(),
        spinEnds: (caught) => (events.push(caught ? 'caught' : 'missed'), w.spinEnds(caught)),
        get spinBudgetMs() {
          return w.spinBudgetMs;
        },
      });
    let late: number;
    let answers: Promise<ToolOutcome>[];
    try {
      const posted = performance.now();
      answers = made.map((h, i) => h.invokeTool({ name: 'llm', argumentsJson: 'm', callId: `late-${i}` }));
      // Queued behind the waits the calls asked for: it runs once they have all ended.
      late = await new Promise<number>((resolve) => setImmediate(() => resolve(performance.now() - posted)));
    } finally {
      delete (turnSpins as Partial<typeof turnSpins>).add; // back to the prototype's
    }
    for (const answer of await Promise.all(answers)) assert.deepEqual(answer, ok('late'));
    assert.deepEqual(made.map((h) => h.answerWaits.missed), missed, 'each lone call was waited for, and missed');
    assert.deepEqual(events, [...Array<string>(modules).fill('start'), ...Array<string>(modules).fill('missed')], 'the eight waits made together');
    assert.ok(late >= budgetMs, `the immediate behind them ran after one budget at least (${late.toFixed(1)} ms)`);
    console.log(`# ${modules} lone calls at a ${budgetMs} ms budget: an immediate queued behind their waits ran ${late.toFixed(1)} ms later`);
  });
});
