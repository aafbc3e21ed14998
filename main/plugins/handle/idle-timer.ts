/** How long a plugin's engine (its worker thread) stays up after its last call ends: 5 minutes. */
export const DEFAULT_ENGINE_IDLE_MS = 5 * 60_000;

/** The longest a Node timer waits (about 24.8 days); longer would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What an idle time must be, in the words every refusal of one uses (the registry's, `serve`'s, the app's). */
export const ENGINE_IDLE_MS_RULE = `a whole number of milliseconds from 0 (keep the engine resident) to ${MAX_TIMER_MS}`;

/**
 * `engineIdleMs` as given, checked: a whole number of milliseconds from 0 (keep the engine
 * resident) to about 24.8 days; absent is the default.
 */
export function checkedEngineIdleMs(ms: number | undefined): number {
  if (ms === undefined) return DEFAULT_ENGINE_IDLE_MS;
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_TIMER_MS) {
    throw new RangeError(`engineIdleMs must be ${ENGINE_IDLE_MS_RULE}, not ${String(ms)}`);
  }
  return ms;
}

/**
 * A module's idle clock: started when its last call ends, stopped by any new call; when it runs
 * out the handle stops the engine. With `idleMs` 0 it never runs.
 */
export class IdleTimer {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly idleMs: number,
    private readonly onIdle: () => void,
  ) {}

  /** Nothing is queued or running: count from now, unless already counting (from the last call's end). */
  start(): void {
    if (this.idleMs === 0 || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.onIdle();
    }, this.idleMs);
    this.timer.unref(); // the clock itself keeps nothing alive (the worker thread does, until it stops)
  }

  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
