import { CallChannel, DONE, RUNNING, STARTED_F64, monotonicMs } from '../worker/call-channel.js';

/**
 * A module's clock: one timer for the module, not one per call. It fires no later than the first
 * posted call could run out; the handle then asks `timeLeft` whether the running call is past
 * its limit, and either ends the worker or sets the timer again for when it could be.
 */
export class Deadline {
  private timer: NodeJS.Timeout | undefined;
  private at = 0;
  /** The delay the timer was set with: due no later than that from now. */
  private inMs = 0;

  constructor(private readonly onFire: () => void) {}

  /** A call with this limit was posted: fire no later than it could expire. */
  arm(timeoutMs: number): void {
    // Set for no later than a limit this long from an earlier moment: due before this call could
    // expire (the usual case, calls of one kind posted one after another), without reading the clock.
    if (this.timer !== undefined && timeoutMs >= this.inMs) return;
    const at = monotonicMs() + timeoutMs;
    if (this.timer !== undefined && this.at <= at) return;
    clearTimeout(this.timer);
    this.fireIn(timeoutMs, at);
  }

  /** Fire in `inMs` (due at `at`, on the monotonic clock). */
  fireIn(inMs: number, at = monotonicMs() + inMs): void {
    this.at = at;
    this.inMs = inMs;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.onFire();
    }, Math.max(1, Math.ceil(inMs)));
    this.timer.unref(); // a call in flight keeps the worker, and so the process, alive
  }

  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * How long the first posted call still has, by the start time the worker recorded: a call not
 * started yet has its whole limit (its clock has not begun), an answered one a token 1 ms (its
 * answer is on its way), a running one what is left, and `overdue` once nothing is.
 */
export function timeLeft(channel: CallChannel, seq: number, timeoutMs: number, now: number): { overdue: true } | { overdue: false; ms: number } {
  const ints = channel.ints;
  if (Atomics.load(ints, DONE) >= seq) return { overdue: false, ms: 1 };
  if (Atomics.load(ints, RUNNING) === seq) {
    const ms = channel.f64[STARTED_F64]! + timeoutMs - now;
    return ms <= 0 ? { overdue: true } : { overdue: false, ms };
  }
  return { overdue: false, ms: timeoutMs };
}
