import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import { PluginCallError, PluginLoadError, messageOf } from './errors.js';
import { INSTANTIATE_TIMEOUT_MS, MAX_FILE_BYTES, MAX_LOG_BYTES, MIB, WORKER_HEAP_MB } from './limits.js';
import type { ExecutionMode, Manifest, ModuleInfo, ModuleLimits } from './manifest.js';
import { runProvider, type Admission, type CreditMeter, type PluginLogger, type Providers } from './providers.js';
import { spawnWorker } from './spawn.js';
import { CallChannel, DONE, Op, REQ, RUNNING, SENT, SLOTS, STARTED_F64, STOP, monotonicMs } from './worker/call-channel.js';
import type {
  CallOp,
  FromWorker,
  GuestFailureKind,
  GuestWorkerData,
  HostReply,
  PluginMetadata,
  PortRequest,
  ToolCallRequest,
  ToolDefinition,
  ToolOutcome,
} from './worker/protocol.js';

/** What `invokeTool` takes; `caller` names who is calling (an MCP client, an agent), if known. */
export interface InvokeRequest {
  name: string;
  argumentsJson: string;
  callId: string;
  caller?: string | undefined;
}

/** Everything a handle needs to run its worker; built by `ModuleRegistry`. */
export interface ModuleHandleInit
  extends Pick<GuestWorkerData, 'componentUrl' | 'coreModules' | 'wasiImports' | 'config' | 'filesRoot' | 'grants' | 'sandbox'> {
  manifest: Manifest;
  limits: ModuleLimits;
  dir: string;
  providers: Providers;
  meter: CreditMeter | undefined;
  logger: PluginLogger;
  /** The worker's JS heap limit (default `WORKER_HEAP_MB`); WebAssembly memory is bounded apart. */
  workerHeapMb?: number | undefined;
}

interface Job {
  op: CallOp;
  request: ToolCallRequest | undefined;
  timeoutMs: number;
  resolve(value: unknown): void;
  reject(err: Error): void;
  /** Its number on the current worker's call channel, once posted. */
  seq: number;
  counted: boolean;
}

interface Live {
  worker: Worker;
  hostPort: MessagePort;
  control: Int32Array;
  channel: CallChannel;
  /** The main thread's end of the worker's message port (logs, host calls, oversized answers). */
  callPort: MessagePort;
  /** The last seq posted, and the last whose answer was taken. */
  posted: number;
  settled: number;
  /** Messages taken from `callPort` (compared with the worker's `SENT`). */
  received: number;
  /** An `Atomics.waitAsync` on `DONE` is pending. */
  waiting: boolean;
  /** The worker is to be notified of posted calls at the end of this event-loop turn. */
  kickPending: boolean;
  /** Answers that came on the port, by seq, until their call is settled. */
  portAnswers: Map<number, Extract<FromWorker, { type: 'done' | 'failed' }>>;
}

const OPS: Record<CallOp, Op> = { metadata: Op.Metadata, 'list-tools': Op.ListTools, 'invoke-tool': Op.InvokeTool };

type WaitAsync = (ints: Int32Array, index: number, value: number) => { async: boolean; value: Promise<string> | string };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/** Counters for logs and benches. */
export interface HandleStats {
  calls: number;
  timeouts: number;
  traps: number;
  restarts: number;
}

/**
 * One loaded plugin module: its own worker thread, its own lock (a FIFO queue: one guest call at a
 * time), its own clock. Calls to different handles never wait on each other; the main thread
 * never runs guest code. A call that runs past its limit terminates the worker; the next call
 * starts a fresh one. A trap, an over-cap output or an output that does not lift fails that call
 * and the worker replaces its instance.
 */
export class ModuleHandle implements ModuleInfo {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly protocols: ModuleInfo['protocols'];
  readonly executionMode: ExecutionMode;
  readonly manifest: Manifest;
  readonly dir: string;
  readonly limits: ModuleLimits;
  readonly stats: HandleStats = { calls: 0, timeouts: 0, traps: 0, restarts: 0 };

  private live: Live | undefined;
  private starting: Promise<Live> | undefined;
  /** Calls not yet posted to the worker, in order. */
  private readonly queue: Job[] = [];
  /** Calls posted to the current worker, in order: the first is running (or about to). */
  private readonly inflight: Job[] = [];
  private awaitingWorker = false;
  private closed = false;
  private spawned = 0;
  /** One deadline timer for the module, not one per call: it fires no later than the first call's limit. */
  private deadline: NodeJS.Timeout | undefined;
  private deadlineAt = 0;

  constructor(private readonly init: ModuleHandleInit) {
    const m = init.manifest.module;
    this.name = m.name;
    this.version = m.version;
    this.description = m.description;
    this.protocols = Object.freeze({ ...init.manifest.protocols });
    this.executionMode = m.execution_mode;
    this.manifest = init.manifest;
    this.limits = init.limits;
    this.dir = init.dir;
  }

  /** Starts the worker and instantiates the component; rejects with `PluginLoadError` if it cannot. */
  async start(): Promise<void> {
    await this.ensureWorker();
  }

  /** The guest's `metadata` export (1 s limit). */
  metadata(): Promise<PluginMetadata> {
    return this.enqueue('metadata', undefined, this.limits.metadataTimeoutMs) as Promise<PluginMetadata>;
  }

  /** The guest's `list-tools` export (1 s limit). */
  listTools(): Promise<ToolDefinition[]> {
    return this.enqueue('list-tools', undefined, this.limits.metadataTimeoutMs) as Promise<ToolDefinition[]>;
  }

  /**
   * The guest's `invoke-tool`. The guest's own `result` resolves (`ok: false` is its tool-error);
   * anything else rejects with `PluginCallError`. The credit meter is asked first, before the call
   * waits for this module's lock; a refusal never queues.
   */
  async invokeTool(req: InvokeRequest): Promise<ToolOutcome> {
    if (this.closed) throw this.unloadedError();
    const meter = this.init.meter;
    if (meter) {
      let admission: Admission;
      try {
        admission = await meter.admit(this.name, { tool: req.name, callId: req.callId, caller: req.caller });
      } catch (err) {
        throw new PluginCallError('credit_refused', `credit check failed: ${messageOf(err)}`, this.name);
      }
      const refused = admission === false ? 'refused by the credit meter' : typeof admission === 'object' && !admission.ok ? admission.reason : undefined;
      if (refused !== undefined) throw new PluginCallError('credit_refused', refused, this.name);
    }
    const request: ToolCallRequest = { name: req.name, argumentsJson: req.argumentsJson, callId: req.callId };
    if (req.caller !== undefined) request.caller = req.caller;
    return this.enqueue('invoke-tool', request, this.limits.maxExecutionMs) as Promise<ToolOutcome>;
  }

  /** Calls waiting for the lock (the running one excluded). */
  get queued(): number {
    return this.queue.length + Math.max(0, this.inflight.length - 1);
  }

  /** Terminates the worker and rejects every pending call with `unloaded`. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.deadline);
    this.deadline = undefined;
    const pending = [...this.inflight.splice(0), ...this.queue.splice(0)];
    for (const job of pending) job.reject(this.unloadedError());
    const live = this.live;
    this.live = undefined;
    const starting = this.starting;
    if (live) await this.kill(live);
    else if (starting) await starting.then((l) => this.kill(l), () => undefined);
  }

  private get heapMb(): number {
    return this.init.workerHeapMb ?? WORKER_HEAP_MB;
  }

  private unloadedError(): PluginCallError {
    return new PluginCallError('unloaded', `module '${this.name}' was unloaded`, this.name);
  }

  private enqueue(op: CallOp, request: ToolCallRequest | undefined, timeoutMs: number): Promise<unknown> {
    if (this.closed) return Promise.reject(this.unloadedError());
    return new Promise((resolve, reject) => {
      this.queue.push({ op, request, timeoutMs, resolve, reject, seq: 0, counted: false });
      this.pump();
    });
  }

  /** Posts queued calls to the worker, up to the channel's depth, starting one if there is none. */
  private pump(): void {
    if (this.closed || this.queue.length === 0) return;
    const live = this.live;
    if (!live) {
      if (this.awaitingWorker) return;
      this.awaitingWorker = true;
      this.ensureWorker().then(
        () => {
          this.awaitingWorker = false;
          this.pump();
        },
        (err: unknown) => {
          this.awaitingWorker = false;
          if (this.closed) return;
          const job = this.queue.shift();
          if (job) {
            if (!job.counted) this.stats.calls++;
            job.reject(new PluginCallError('crashed', `module '${this.name}' could not start: ${messageOf(err)}`, this.name));
          }
          this.pump();
        },
      );
      return;
    }
    if (this.inflight.length >= SLOTS) return;
    while (this.queue.length > 0 && this.inflight.length < SLOTS) {
      const job = this.queue.shift()!;
      const seq = ++live.posted;
      job.seq = seq;
      if (!job.counted) {
        job.counted = true;
        this.stats.calls++;
      }
      if (!live.channel.writeRequest(seq, OPS[job.op], job.request)) {
        live.callPort.postMessage({ seq, request: job.request! } satisfies PortRequest);
      }
      this.inflight.push(job);
      this.armDeadline(job.timeoutMs);
    }
    // A worker between calls sees the new count at once; a parked one is woken once per turn of
    // the event loop for every call posted in it (waking a thread costs ~6 µs here).
    Atomics.store(live.channel.ints, REQ, live.posted);
    if (!live.kickPending) {
      live.kickPending = true;
      setImmediate(this.kick, live);
    }
    this.awaitAnswers(live);
  }

  private readonly kick = (live: Live): void => {
    live.kickPending = false;
    Atomics.notify(live.channel.ints, REQ);
  };

  /** One pending wait on `DONE` covers every call posted so far. */
  private awaitAnswers(live: Live): void {
    if (live.waiting || this.inflight.length === 0) return;
    live.waiting = true;
    const wait = waitAsync(live.channel.ints, DONE, live.settled);
    if (typeof wait.value === 'string') queueMicrotask(() => this.onAnswers(live));
    else void wait.value.then(() => this.onAnswers(live));
  }

  private onAnswers(live: Live): void {
    live.waiting = false;
    if (live !== this.live) return;
    this.settleDone(live);
    this.pump();
    if (live === this.live) this.awaitAnswers(live);
  }

  /** Settles, in order, every call the worker has answered. */
  private settleDone(live: Live): void {
    const done = Atomics.load(live.channel.ints, DONE);
    if (done <= live.settled) return;
    this.drainPort(live); // the calls' log lines first, and any answer that did not fit its slot
    while (live.settled < done && this.inflight.length > 0) {
      const seq = ++live.settled;
      const job = this.inflight.shift()!;
      this.settle(live, job, seq);
    }
  }

  private settle(live: Live, job: Job, seq: number): void {
    const answer = live.channel.readAnswer(seq);
    if (answer === undefined) {
      const msg = live.portAnswers.get(seq);
      live.portAnswers.delete(seq);
      if (msg?.type === 'done') return job.resolve(msg.value);
      if (msg?.type === 'failed') return this.fail(job, msg.kind, msg.message);
      return job.reject(new PluginCallError('crashed', `module '${this.name}': the worker's answer was lost`, this.name));
    }
    if ('value' in answer) return job.resolve(answer.value);
    this.fail(job, answer.failed as GuestFailureKind, answer.message);
  }

  private fail(job: Job, kind: GuestFailureKind, message: string): void {
    if (kind === 'trap') this.stats.traps++;
    this.init.logger.log('warn', message, { module: this.name, kind });
    job.reject(new PluginCallError(kind, `module '${this.name}': ${message}`, this.name));
  }

  /** Takes what the worker has put on its port and the 'message' event has not delivered yet. */
  private drainPort(live: Live): void {
    while (live.received < Atomics.load(live.channel.ints, SENT)) {
      const got = receiveMessageOnPort(live.callPort);
      if (!got) return;
      this.onMessage(live, got.message as FromWorker);
    }
  }

  private armDeadline(timeoutMs: number): void {
    const at = monotonicMs() + timeoutMs;
    if (this.deadline !== undefined && this.deadlineAt <= at) return;
    clearTimeout(this.deadline);
    this.setDeadline(at, timeoutMs);
  }

  private setDeadline(at: number, inMs: number): void {
    this.deadlineAt = at;
    this.deadline = setTimeout(() => this.onDeadline(), Math.max(1, Math.ceil(inMs)));
    this.deadline.unref(); // a call in flight keeps the worker, and so the process, alive
  }

  /** The first call in flight is the one running: is it past its limit? Else wait until it could be. */
  private onDeadline(): void {
    this.deadline = undefined;
    const live = this.live;
    const job = this.inflight[0];
    if (!live || !job) return;
    const ints = live.channel.ints;
    const now = monotonicMs();
    let remaining = job.timeoutMs; // not started yet: its clock has not begun
    if (Atomics.load(ints, DONE) >= job.seq) {
      remaining = 1; // answered; the answer is on its way to onAnswers
    } else if (Atomics.load(ints, RUNNING) === job.seq) {
      const started = live.channel.f64[STARTED_F64]!;
      remaining = started + job.timeoutMs - now;
      if (remaining <= 0) return this.onTimeout(live, job);
    }
    this.setDeadline(now + remaining, remaining);
  }

  private onTimeout(live: Live, job: Job): void {
    this.stats.timeouts++;
    this.live = undefined;
    this.inflight.shift();
    this.requeueInflight();
    void this.kill(live);
    const what = job.op === 'invoke-tool' ? `tool '${job.request?.name ?? ''}'` : job.op;
    this.init.logger.log('warn', `${what} ran past ${job.timeoutMs} ms; the instance was terminated and will be replaced`, { module: this.name });
    job.reject(new PluginCallError('timeout', `module '${this.name}': ${what} ran past its ${job.timeoutMs} ms limit`, this.name));
    this.pump();
  }

  /** Calls posted to a worker that is gone but never started there go back to the front of the queue. */
  private requeueInflight(): void {
    const rest = this.inflight.splice(0);
    for (const job of rest) job.seq = 0;
    this.queue.unshift(...rest);
  }

  private ensureWorker(): Promise<Live> {
    if (this.live) return Promise.resolve(this.live);
    if (this.closed) return Promise.reject(this.unloadedError());
    this.starting ??= this.spawn().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private spawn(): Promise<Live> {
    if (this.spawned++ > 0) this.stats.restarts++;
    const { port1, port2 } = new MessageChannel();
    const calls = new MessageChannel();
    const control = new SharedArrayBuffer(4);
    const channel = CallChannel.create();
    const data: GuestWorkerData = {
      module: this.name,
      componentUrl: this.init.componentUrl,
      coreModules: this.init.coreModules,
      wasiImports: this.init.wasiImports,
      config: this.init.config,
      filesRoot: this.init.filesRoot,
      grants: this.init.grants,
      maxOutputBytes: this.limits.maxOutputBytes,
      maxMemoryBytes: this.limits.maxMemoryMb * MIB,
      maxLogBytes: MAX_LOG_BYTES,
      maxFileBytes: MAX_FILE_BYTES,
      sandbox: this.init.sandbox,
      control,
      hostPort: port2,
      channel: channel.sab,
      callPort: calls.port2,
    };
    const worker = spawnWorker('guest-entry', {
      workerData: data,
      transferList: [port2, calls.port2],
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb },
    });
    const live: Live = {
      worker,
      hostPort: port1,
      control: new Int32Array(control),
      channel,
      callPort: calls.port1,
      posted: 0,
      settled: 0,
      received: 0,
      waiting: false,
      kickPending: false,
      portAnswers: new Map(),
    };
    live.callPort.on('message', (msg: FromWorker) => this.onMessage(live, msg));
    live.callPort.unref();
    return new Promise<Live>((resolve, reject) => {
      let ready = false;
      const timer = setTimeout(() => {
        fail(new PluginLoadError(`instantiating took longer than ${INSTANTIATE_TIMEOUT_MS} ms`));
      }, INSTANTIATE_TIMEOUT_MS);
      const fail = (err: Error): void => {
        clearTimeout(timer);
        if (ready) return;
        ready = true;
        void this.kill(live);
        reject(err);
      };
      worker.on('message', (msg: FromWorker) => {
        if (msg.type === 'ready') {
          if (ready) return;
          ready = true;
          clearTimeout(timer);
          if (this.closed) {
            void this.kill(live);
            reject(this.unloadedError());
            return;
          }
          this.live = live;
          resolve(live);
          return;
        }
        if (msg.type === 'init-failed') return fail(new PluginLoadError(`cannot instantiate: ${msg.message}`));
      });
      worker.on('error', (err) => {
        const why = (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `the worker ran out of its ${this.heapMb} MiB JS heap and was stopped`
          : `worker failed: ${err.message}`;
        if (!ready) return fail(new PluginLoadError(why));
        this.onWorkerGone(live, why);
      });
      worker.on('exit', (code) => {
        if (!ready) return fail(new PluginLoadError(`worker exited with code ${code}`));
        this.onWorkerGone(live, `worker exited with code ${code}`);
      });
    });
  }

  /** A message from the worker's port: a log line, a bridged host call, or an answer too large for its slot. */
  private onMessage(live: Live, msg: FromWorker): void {
    live.received++;
    if (live !== this.live) return; // a terminated worker's last words
    switch (msg.type) {
      case 'done':
      case 'failed':
        live.portAnswers.set(msg.id, msg);
        return;
      case 'log':
        this.init.logger.log(msg.level, msg.message, { module: this.name, source: msg.source });
        return;
      case 'host':
        void this.serveHost(live, msg);
        return;
      default:
        return;
    }
  }
  private async serveHost(live: Live, msg: Extract<FromWorker, { type: 'host' }>): Promise<void> {
    let reply: HostReply;
    try {
      const value = await runProvider(this.init.providers, this.name, msg.capability, msg.method, msg.args);
      reply = { seq: msg.seq, ok: true, value };
    } catch (err) {
      reply = { seq: msg.seq, ok: false, error: `${msg.capability}: ${messageOf(err)}` };
    }
    if (live !== this.live) return;
    try {
      live.hostPort.postMessage(reply);
    } catch (err) {
      live.hostPort.postMessage({ seq: msg.seq, ok: false, error: `${msg.capability}: the provider's answer cannot be passed on (${messageOf(err)})` });
    }
    Atomics.store(live.control, 0, 1);
    Atomics.notify(live.control, 0);
  }

  private onWorkerGone(live: Live, why: string): void {
    if (live !== this.live) return;
    this.settleDone(live); // what it answered before it went stays answered
    this.live = undefined;
    live.hostPort.close();
    live.callPort.close();
    this.init.logger.log('error', why, { module: this.name });
    const job = this.inflight.shift();
    this.requeueInflight();
    if (job) job.reject(new PluginCallError('crashed', `module '${this.name}': ${why}`, this.name));
    this.pump();
  }

  private async kill(live: Live): Promise<void> {
    live.hostPort.close();
    live.callPort.close();
    // Wake a worker parked in Atomics.wait (on a host reply or for its next call) so terminate()
    // never waits on it, and this thread's own wait on DONE so it does not linger.
    Atomics.store(live.control, 0, 1);
    Atomics.notify(live.control, 0);
    const ints = live.channel.ints;
    Atomics.store(ints, STOP, 1);
    Atomics.notify(ints, REQ);
    Atomics.notify(ints, DONE);
    await live.worker.terminate().catch(() => undefined);
  }
}
