import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import { PluginLoadError, messageOf } from '../errors.js';
import { spawnWorker } from '../spawn.js';
import { turnSpins, type AnswerSpin, type SpinWaiter } from './answer-spin.js';
import { CallChannel, DONE, NAME_TOLD, REQ, SENT, STOP } from '../worker/call-channel.js';
import type { FromWorker, GuestWorkerData, HostReply } from '../worker/protocol.js';

/** A start that did not finish instantiating within its limit (a component whose top-level code spins, say). */
export class InstantiateTimedOut extends PluginLoadError {
  constructor(readonly limitMs: number) {
    super(`instantiating took longer than ${limitMs} ms`);
  }
}

/** Why a provider's signal aborted: the engine that asked is gone, and no answer is read. */
export class EngineEnded extends Error {
  constructor() {
    super("the plugin's engine that asked ended (its call was cancelled or timed out, or the module was stopped, unloaded or revoked)");
    this.name = 'AbortError';
  }
}

/** What the worker is started with, less the channels and ports made here. */
export type GuestWorkerConfig = Omit<GuestWorkerData, 'control' | 'hostPort' | 'channel' | 'callPort'>;

/** An answer that came on the port instead of its slot. */
export type PortAnswer = Extract<FromWorker, { type: 'done' | 'failed' }>;

/** How a worker tells its handle what happens to it. */
export interface GuestWorkerEvents {
  /** A message from the worker's port: a log line, a bridged host call, an answer too large for its slot. */
  message(worker: GuestWorker, msg: FromWorker): void;
  /** The component is instantiated. False if the handle closed meanwhile: the worker is then stopped. */
  ready(worker: GuestWorker): boolean;
  /** The worker died (error, exit, out of heap) after it was ready. */
  gone(worker: GuestWorker, why: string): void;
  /** `DONE` moved while `awaitAnswers` waited: answers are there to take. */
  answers(worker: GuestWorker): void;
  /** What a start rejects with when the handle closed while the worker started. */
  unloaded(): Error;
}

/**
 * One module worker thread and the shared state the main thread keeps with it: the call channel,
 * the port for everything else, and the counters that say what was posted, answered and read.
 * A handle replaces a worker after a timeout or a crash; each worker's numbers start at zero.
 */
export class GuestWorker implements SpinWaiter {
  /** The last seq posted, and the last whose answer was taken. */
  posted = 0;
  settled = 0;
  /** Messages taken from `callPort` (compared with the worker's `SENT`). */
  received = 0;
  /** An `Atomics.waitAsync` on `DONE` is pending. */
  private waiting = false;
  /** The worker is to be notified of posted calls at the end of this event-loop turn. */
  private kickPending = false;
  /** Answers that came on the port, by seq, until their call is settled. */
  readonly portAnswers = new Map<number, PortAnswer>();
  /**
   * Aborted when this engine ends, for any reason (a cancel, a timeout, an unload or revoke, a
   * crash): a provider still working for it (`llm`, `billing`) is told that nobody waits.
   */
  private readonly ending = new AbortController();
  private readonly control: Int32Array;

  private constructor(
    private readonly worker: Worker,
    /** The main thread's end of the port that carries bridged host-call replies. */
    private readonly hostPort: MessagePort,
    control: SharedArrayBuffer,
    readonly channel: CallChannel,
    /** The main thread's end of the worker's message port (logs, host calls, oversized answers). */
    readonly callPort: MessagePort,
    private readonly events: GuestWorkerEvents,
    /** The handle's short wait for a lone call's answer (kept across its engines). */
    private readonly spin: AnswerSpin,
  ) {
    this.control = new Int32Array(control);
  }

  /**
   * Starts a worker and instantiates the component in it; resolves once it is ready, rejects with
   * `PluginLoadError` if it cannot (or with `events.unloaded()` if the handle closed meanwhile).
   * Past `instantiateTimeoutMs` (the handle's, by default `INSTANTIATE_TIMEOUT_MS`) it rejects with `InstantiateTimedOut`.
   * Aborting `signal` abandons the start: the worker is terminated at once (a component whose
   * top-level code spins is not waited for until the instantiation limit) and the start rejects
   * with the signal's reason once the thread has ended.
   */
  static start(config: GuestWorkerConfig, heapMb: number, instantiateTimeoutMs: number, events: GuestWorkerEvents, spin: AnswerSpin, signal?: AbortSignal): Promise<GuestWorker> {
    signal?.throwIfAborted();
    const { port1, port2 } = new MessageChannel();
    const calls = new MessageChannel();
    const control = new SharedArrayBuffer(4);
    const channel = CallChannel.create();
    const data: GuestWorkerData = { ...config, control, hostPort: port2, channel: channel.sab, callPort: calls.port2 };
    const worker = spawnWorker('guest-entry', {
      workerData: data,
      transferList: [port2, calls.port2],
      resourceLimits: { maxOldGenerationSizeMb: heapMb },
    });
    const live = new GuestWorker(worker, port1, control, channel, calls.port1, events, spin);
    live.callPort.on('message', (msg: FromWorker) => live.deliver(msg));
    live.callPort.unref();
    return new Promise<GuestWorker>((resolve, reject) => {
      let ready = false;
      const timer = setTimeout(() => fail(new InstantiateTimedOut(instantiateTimeoutMs)), instantiateTimeoutMs);
      const fail = (err: unknown): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abandon);
        if (ready) return;
        ready = true;
        void live.kill().then(() => reject(err)); // settled once the thread is gone: nothing outlives a failed start
      };
      const abandon = (): void => fail(signal!.reason);
      signal?.addEventListener('abort', abandon, { once: true });
      worker.on('message', (msg: FromWorker) => {
        if (msg.type === 'ready') {
          if (ready) return;
          ready = true;
          clearTimeout(timer);
          signal?.removeEventListener('abort', abandon);
          if (!events.ready(live)) {
            void live.kill();
            reject(events.unloaded());
            return;
          }
          resolve(live);
          return;
        }
        if (msg.type === 'init-failed') return fail(new PluginLoadError(`cannot instantiate: ${msg.message}`));
      });
      worker.on('error', (err) => {
        const why = (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `the worker ran out of its ${heapMb} MiB JS heap and was stopped`
          : `worker failed: ${err.message}`;
        if (!ready) return fail(new PluginLoadError(why));
        events.gone(live, why);
      });
      worker.on('exit', (code) => {
        if (!ready) return fail(new PluginLoadError(`worker exited with code ${code}`));
        events.gone(live, `worker exited with code ${code}`);
      });
    });
  }

  /**
   * Publishes the calls posted so far. A lone call (the worker has answered everything else, so
   * it is parked or about to park) wakes it at once: the wake-up, tens of µs on a VM, then overlaps
   * what this thread does until it yields (issue 21: 15-20 µs off a call at concurrency 1).
   * Otherwise a parked worker is woken once, at the end of this event-loop turn, for every call
   * posted in it; one still running sees the new count itself before it parks. Waking at every
   * post would wake a worker that is busy under load many times a turn for nothing.
   */
  notifyPosted(): void {
    const ints = this.channel.ints;
    const idle = this.posted - this.settled === 1 && Atomics.load(ints, DONE) === this.settled;
    Atomics.store(ints, REQ, this.posted);
    if (idle) {
      Atomics.notify(ints, REQ);
      return;
    }
    if (!this.kickPending) {
      this.kickPending = true;
      setImmediate(this.kick);
    }
  }

  private readonly kick = (): void => {
    this.kickPending = false;
    Atomics.notify(this.channel.ints, REQ);
  };

  /**
   * One pending wait on `DONE` covers every call posted so far; `events.answers` hears when it
   * moves. A lone call's answer is first waited for at the end of this event-loop turn without
   * yielding, up to the spin's budget (`AnswerSpin`): calls posted later in the turn make it not
   * lone, and the turn's other work is done first.
   */
  awaitAnswers(): void {
    if (this.waiting) return;
    this.waiting = true;
    if (this.posted - this.settled === 1 && this.spin.budgetMs > 0) turnSpins.add(this);
    else this.waitAnswers();
  }

  /** `SpinWaiter`: at the end of the turn, whether its lone call is waited for with the turn's others. */
  spinStarts(): boolean {
    // An engine ended meanwhile (its DONE was notified, no answer will come) is told to its handle at once.
    if (this.ending.signal.aborted) this.answersIn();
    else if (this.posted - this.settled === 1 && this.spin.takes()) return true;
    else this.waitAnswers();
    return false;
  }

  spinAnswered(): boolean {
    return Atomics.load(this.channel.ints, DONE) !== this.settled;
  }

  spinEnds(caught: boolean): void {
    if (caught) {
      this.spin.hit();
      this.answersIn();
    } else {
      this.spin.miss();
      this.waitAnswers();
    }
  }

  get spinBudgetMs(): number {
    return this.spin.budgetMs;
  }

  private waitAnswers(): void {
    const wait = waitAsync(this.channel.ints, DONE, this.settled);
    if (typeof wait.value === 'string') queueMicrotask(this.answersIn);
    else void wait.value.then(this.answersIn);
  }

  private readonly answersIn = (): void => {
    this.waiting = false;
    this.events.answers(this);
  };

  /** Whether the guest was ever handed its module's name, or a provider asked for it (`NAME_TOLD`), since this engine started. */
  toldName(): boolean {
    return Atomics.load(this.channel.ints, NAME_TOLD) !== 0;
  }

  /** Calls the worker has answered (the count; their answers are in the slots or on the port). */
  answered(): number {
    return Atomics.load(this.channel.ints, DONE);
  }

  /** Takes what the worker has put on its port and the 'message' event has not delivered yet. */
  drainPort(): void {
    while (this.received < Atomics.load(this.channel.ints, SENT)) {
      const got = receiveMessageOnPort(this.callPort);
      if (!got) return;
      this.deliver(got.message as FromWorker);
    }
  }

  /** Hands a bridged host call's reply to the worker, which is parked waiting for it. */
  replyToHost(reply: HostReply, capability: string): void {
    try {
      this.hostPort.postMessage(reply);
    } catch (err) {
      this.hostPort.postMessage({ seq: reply.seq, ok: false, error: `${capability}: the provider's answer cannot be passed on (${messageOf(err)})` });
    }
    Atomics.store(this.control, 0, 1);
    Atomics.notify(this.control, 0);
  }

  /** What a provider serving this engine's host call is handed: aborted when the engine ends. */
  get ended(): AbortSignal {
    return this.ending.signal;
  }

  /** Closes the main thread's ports (the worker is gone or going), and says so to providers still at work for it. */
  closePorts(): void {
    if (!this.ending.signal.aborted) this.ending.abort(new EngineEnded());
    this.hostPort.close();
    this.callPort.close();
  }

  async kill(): Promise<void> {
    this.closePorts();
    // Wake a worker parked in Atomics.wait (on a host reply or for its next call) so terminate()
    // never waits on it, and this thread's own wait on DONE so it does not linger.
    Atomics.store(this.control, 0, 1);
    Atomics.notify(this.control, 0);
    const ints = this.channel.ints;
    Atomics.store(ints, STOP, 1);
    Atomics.notify(ints, REQ);
    Atomics.notify(ints, DONE);
    await this.worker.terminate().catch(() => undefined);
  }

  private deliver(msg: FromWorker): void {
    this.received++;
    this.events.message(this, msg);
  }
}

type WaitAsync = (ints: Int32Array, index: number, value: number) => { async: boolean; value: Promise<string> | string };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;
