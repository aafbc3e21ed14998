import { availableParallelism } from 'node:os';

/**
 * How long the main thread may wait, without yielding, for the answer to a module's lone call:
 * 80 µs. Issue 21 (docs/benchmarks.md, "item 2, seventh attempt"): at concurrency 1 a WASM call
 * crosses two thread wake-ups more than a plain request, and parking the main thread in its
 * event loop for the answer, then being woken for it, cost about as much main-thread CPU as this
 * wait and ~15 µs more of the call's latency. An echo's answer comes within ~30-60 µs; a call
 * that takes longer is answered through the event loop as before, and the next lone calls are
 * not waited for (`AnswerSpin`'s backoff).
 */
export const ANSWER_SPIN_MS = 0.08;

/** After this many misses in a row, one lone call in 256 is still waited for, to notice the module became fast. */
const MAX_SKIP = 256;

/** What an answer spin must be, in the words its refusal uses. */
export const ANSWER_SPIN_MS_RULE = 'a number of milliseconds from 0 (never wait without yielding) to 1000';

/**
 * `answerSpinMs` as given, checked: absent is `ANSWER_SPIN_MS`, or 0 on a machine with one CPU,
 * where the waiting thread would only keep the worker from running.
 */
export function checkedAnswerSpinMs(ms: number | undefined): number {
  if (ms === undefined) return availableParallelism() > 1 ? ANSWER_SPIN_MS : 0;
  if (typeof ms !== 'number' || !(ms >= 0 && ms <= 1000)) throw new RangeError(`answerSpinMs must be ${ANSWER_SPIN_MS_RULE}, not ${String(ms)}`);
  return ms;
}

/**
 * A module's budget and backoff for the short wait for a lone call's answer on the main thread
 * (`turnSpins` below makes the wait: a bounded loop on the call channel's `DONE`, no sleep), kept
 * by the handle across its engines. The wait never outlasts
 * `budgetMs`. A call not answered within it makes the next lone calls go straight to the event
 * loop: 1 skipped, then 2, 4… up to 256 while the misses go on; one answered in time resets it.
 * So a module whose tools take longer than the budget costs the main thread at most one budget
 * in 256 calls, and one that alternates fast and slow calls at most one budget a call.
 */
export class AnswerSpin {
  /** Lone calls waited for whose answer came within the budget, and those it did not. */
  caught = 0;
  missed = 0;
  /** Lone calls still to go to the event loop without a wait; and how many the next miss skips. */
  private skip = 0;
  private nextSkip = 1;

  constructor(readonly budgetMs: number) {}

  /** Whether this lone call is to be waited for: false if the backoff skips it (or the budget is 0). */
  takes(): boolean {
    if (this.budgetMs === 0) return false;
    if (this.skip > 0) {
      this.skip--;
      return false;
    }
    return true;
  }

  /** A wait caught its answer within the budget: the next lone call is waited for. */
  hit(): void {
    this.caught++;
    this.nextSkip = 1;
  }

  /** A wait ran out its budget: the next lone calls go to the event loop, 1, 2, 4… up to 256. */
  miss(): void {
    this.missed++;
    this.skip = this.nextSkip;
    this.nextSkip = Math.min(this.nextSkip * 2, MAX_SKIP);
  }

}

/** A lone call's wait as the turn's spins see it (`GuestWorker`). */
export interface SpinWaiter {
  /** Whether to wait for it now; false if it was handed on (an engine ended, no longer lone, a wait the backoff skips). */
  spinStarts(): boolean;
  /** Its answer is in. */
  spinAnswered(): boolean;
  /** The wait ended: `caught`, the answer is there to take; else it goes to the event loop. */
  spinEnds(caught: boolean): void;
  readonly spinBudgetMs: number;
}

/**
 * The waits of every module's lone calls posted in one event-loop turn, made together at its end:
 * one loop polls each call's answer until it is in or its budget has run, so the turn waits at
 * most the longest budget, not a budget per module one after another (a module each for 32
 * slow lone calls posted in the same turn held the main thread 32 budgets in a row). Two arrays
 * used in turn and kept: a call's wait makes no garbage.
 */
class TurnSpins {
  /** The waits asked for in this turn; and those of the turn being ended, with how each ended (0 open, 1 caught, 2 missed). */
  private queue: SpinWaiter[] = [];
  private batch: SpinWaiter[] = [];
  private readonly ends: number[] = [];
  private scheduled = false;

  add(waiter: SpinWaiter): void {
    this.queue.push(waiter);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.run);
  }

  private readonly run = (): void => {
    this.scheduled = false;
    // Waits asked for while these end (an answer taken posts the next call) go to the next turn.
    const batch = this.queue;
    this.queue = this.batch;
    this.batch = batch;
    const ends = this.ends;
    let open = 0;
    for (let i = 0; i < batch.length; i++) {
      const w = batch[i]!;
      try {
        if (w.spinStarts()) batch[open++] = w;
      } catch (err) {
        rethrowLater(err);
      }
    }
    batch.length = open;
    ends.length = open;
    ends.fill(0);
    const started = performance.now();
    while (open > 0) {
      const spent = performance.now() - started;
      for (let i = 0; i < batch.length; i++) {
        if (ends[i] !== 0) continue;
        if (batch[i]!.spinAnswered()) ends[i] = 1;
        else if (spent >= batch[i]!.spinBudgetMs) ends[i] = 2;
        else continue;
        open--;
      }
    }
    for (let i = 0; i < batch.length; i++) {
      try {
        batch[i]!.spinEnds(ends[i] === 1);
      } catch (err) {
        rethrowLater(err); // the turn's other waits are still ended: else their modules would never hear their answers
      }
    }
    batch.length = 0;
  };
}

/** A throw (a logger's, say, as a call is settled) thrown again from its own microtask, as it would have been from its own immediate. */
function rethrowLater(err: unknown): void {
  queueMicrotask(() => {
    throw err;
  });
}

/** The process's one set of end-of-turn waits (the main thread's). */
export const turnSpins = new TurnSpins();
