import { PluginCallError, messageOf } from '../errors.js';
import { START_RETRY_FIRST_MS, START_RETRY_MAX_MS } from '../limits.js';
import { monotonicMs } from '../worker/call-channel.js';
import { inStartTurn } from './engine-starts.js';
import { InstantiateTimedOut, type GuestWorker } from './guest-worker.js';
import { StartWaitError } from './start-wait.js';

/** What a module's `EngineStarter` is told by its handle. */
export interface EngineStarterInit {
  module: string;
  /** How long one start may take to instantiate the component: also what failed starts may add up to. */
  instantiateTimeoutMs: number;
  /** A start begins (counted before it waits its turn); `restart`: the engine before it failed. */
  began(restart: boolean): void;
  /** Compiles and instantiates an engine, in the start turn `EngineStarter` holds for it. */
  launch(signal: AbortSignal): Promise<GuestWorker>;
}

/** Why a start no call wants any more was abandoned (never seen by a caller). */
export class StartAbandoned extends Error {
  constructor() {
    super('the engine start was abandoned: no call waits for it');
  }
}

/**
 * One module's engine starts and stops, apart from the calls that ask for them: one start at a
 * time, never beside an idle stop still under way, each in its process-wide start turn
 * (`inStartTurn`); and the wait after starts that failed. A start that ran out of its
 * instantiation time, or starts that served nothing (never became ready, or their engine ended
 * before answering a call) adding up to as long, make the module wait before the next start (1 s,
 * doubling up to 60 s): a component whose top-level code spins cannot hold one of the gateway's
 * few start turns at every call. An engine's first answer clears that account.
 */
export class EngineStarter {
  private started: Promise<GuestWorker> | undefined;
  /** Abandons the start under way: its handle closed, or every call that wanted it was cancelled. */
  private startAbort: AbortController | undefined;
  /** An idle stop under way: the next start waits for it, so a module never has two engines. */
  private stopping: Promise<void> | undefined;
  /** How the last engine ended: the next start after a failure counts as a restart. */
  private lastEnd: 'none' | 'idle' | 'failed' = 'none';
  /** No start before `until` (monotonic ms); the next such failure waits twice `waitMs`. */
  private retry: { until: number; waitMs: number; why: string } | undefined;
  /** Turn time held by starts that served nothing since an engine last answered (`servedNothing`). */
  private unreadyMs = 0;
  /** How long the last start held its start turn (compiling, instantiating). */
  private lastTurnMs = 0;

  constructor(private readonly init: EngineStarterInit) {}

  /** The start under way, if any. */
  get starting(): Promise<GuestWorker> | undefined {
    return this.started;
  }

  /** An idle stop under way, if any. */
  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /** Starts an engine, or joins the start under way. */
  start(): Promise<GuestWorker> {
    if (!this.started) {
      const abort = new AbortController();
      this.startAbort = abort;
      this.started = this.run(abort.signal).finally(() => {
        this.started = undefined;
        if (this.startAbort === abort) this.startAbort = undefined;
      });
    }
    return this.started;
  }

  /** Ends the start under way with `reason`: one waiting its turn, compiling or instantiating. */
  abandon(reason: unknown = new StartAbandoned()): void {
    this.startAbort?.abort(reason);
  }

  /** An engine with no call is being stopped (`kill`): the next start waits for it. */
  stoppedIdle(kill: Promise<void>): void {
    this.lastEnd = 'idle';
    const stopping: Promise<void> = kill.finally(() => {
      if (this.stopping === stopping) this.stopping = undefined;
    });
    this.stopping = stopping;
  }

  /** The engine ended before its time (a call's limit, a crash, a cancelled running call). */
  failed(): void {
    this.lastEnd = 'failed';
  }

  /** Resolves once no idle stop is under way. */
  async stopped(): Promise<void> {
    await this.stopping;
  }

  /**
   * While a start that ran out of time waits to be tried again, a call is refused at once with
   * `crashed` (a `StartWaitError`) naming the wait, rather than setting off another start that
   * would hold a start turn for the whole instantiation limit.
   */
  refusal(): StartWaitError | undefined {
    const retry = this.retry;
    if (!retry) return undefined;
    const leftMs = retry.until - monotonicMs();
    if (leftMs <= 0) return undefined;
    return new StartWaitError(this.init.module, retry.why, leftMs);
  }

  /** An engine answered a call: its start served, so the failed starts before it no longer add up. */
  answered(): void {
    if (this.unreadyMs === 0 && this.retry === undefined) return;
    this.retry = undefined;
    this.unreadyMs = 0;
  }

  /**
   * A start failed with `err`: what every call waiting for it fails with, or undefined when a call
   * may start a fresh engine at once (a start abandoned for want of callers, the failed starts not
   * yet adding up). A start that ran out of time makes the module wait; any other failure fails
   * the calls waiting for it all now, rather than one per further start (a burst of 64 calls at a
   * component that cannot start would otherwise hold a start turn for 64 instantiation limits).
   */
  startFailed(err: unknown): (() => PluginCallError) | undefined {
    if (err instanceof StartAbandoned) return this.servedNothing('given up when its calls were cancelled');
    if (err instanceof InstantiateTimedOut) return this.waitBeforeStarting(`${messageOf(err)} at its last start`, messageOf(err));
    const why = `module '${this.init.module}' could not start: ${messageOf(err)}`;
    return this.servedNothing(messageOf(err)) ?? (() => new PluginCallError('crashed', why, this.init.module));
  }

  /**
   * The last start served nothing (`last` says how: it never became ready, or its engine ended
   * before answering) after holding its start turn for `lastTurnMs`. Once such starts have held
   * turns, with no engine answering a call between, as long as one start may take (the
   * instantiation limit), the module waits as after a start that ran out of time. Otherwise a
   * component whose top-level code spins would start at every call for a client whose calls time
   * out (and cancel) before the limit, and one that spins nearly to the limit and then traps would
   * never run out of time at all. Returns what the calls waiting then fail with.
   */
  servedNothing(last: string): (() => PluginCallError) | undefined {
    this.unreadyMs += this.lastTurnMs;
    if (this.unreadyMs < this.init.instantiateTimeoutMs) return undefined;
    const why = `its starts ran ${Math.round(this.unreadyMs)} ms in all without becoming ready (the last: ${last})`;
    return this.waitBeforeStarting(why, why);
  }

  /**
   * Starts no engine before a wait (1 s, doubling at each such failure up to 60 s), and says so:
   * `why` for the calls refused during it, `now` for those that waited for the failed start.
   */
  private waitBeforeStarting(why: string, now: string): () => PluginCallError {
    const waitMs = Math.min(this.retry ? this.retry.waitMs * 2 : START_RETRY_FIRST_MS, START_RETRY_MAX_MS);
    this.retry = { until: monotonicMs() + waitMs, waitMs, why };
    this.unreadyMs = 0;
    return () => new StartWaitError(this.init.module, now, waitMs);
  }

  /** After an idle stop still under way has ended, in its turn among the engines starting. */
  private async run(signal: AbortSignal): Promise<GuestWorker> {
    await this.stopping;
    signal.throwIfAborted();
    this.init.began(this.lastEnd === 'failed');
    let turnSince: number | undefined;
    try {
      return await inStartTurn(() => {
        turnSince = monotonicMs();
        return this.init.launch(signal);
      }, signal);
    } finally {
      this.lastTurnMs = turnSince === undefined ? 0 : monotonicMs() - turnSince;
    }
  }
}
