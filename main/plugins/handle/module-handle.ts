import { type AbortLike, untilAborted } from '../../jsonrpc/index.js';
import type { CompiledComponent } from '../component-cache.js';
import { PluginCallError, PluginLoadError, messageOf } from '../errors.js';
import { INSTANTIATE_TIMEOUT_MS, MAX_FILE_BYTES, MAX_LOG_BYTES, MAX_WAITING_ARGUMENT_BYTES, MAX_WAITING_CALLS, MIB, WORKER_HEAP_MB } from '../limits.js';
import type { ExecutionMode, Manifest, ModuleInfo, ModuleLimits } from '../manifest.js';
import { runProvider, type Admission, type CreditMeter, type PluginLogger, type Providers } from '../providers.js';
import { monotonicMs } from '../worker/call-channel.js';
import type {
  CallOp,
  FromWorker,
  GuestFailureKind,
  GuestWorkerData,
  HostReply,
  PluginMetadata,
  ToolCallRequest,
  ToolDefinition,
  ToolOutcome,
} from '../worker/protocol.js';
import { CallQueue, InvokeToolRequest, Job, type Settler } from './call-queue.js';
import { Deadline, timeLeft } from './deadline.js';
import { EngineStarter, StartAbandoned } from './engine-starter.js';
import { GuestWorker, type GuestWorkerConfig, type GuestWorkerEvents } from './guest-worker.js';
import { AnswerSpin, checkedAnswerSpinMs } from './answer-spin.js';
import { IdleTimer, checkedEngineIdleMs } from './idle-timer.js';
import { LogRate } from './log-rate.js';
import { ToolSchemaError, checkedTools } from './tool-schemas.js';
import { WaitingBudget } from './waiting-budget.js';

/** What `invokeTool` takes; `caller` names who is calling (an MCP client, an agent), if known. */
export interface InvokeRequest {
  name: string;
  argumentsJson: string;
  callId: string;
  caller?: string | undefined;
}

/** How a caller may stop its call. */
export interface InvokeOptions {
  /**
   * Aborting it cancels the call: one still queued is taken out, one posted ahead is skipped, and
   * a running guest is stopped (its worker terminated; the next call starts a fresh instance).
   * The call rejects with `PluginCallError` `cancelled` at once; one its worker has already answered
   * keeps its answer (it ran to its end). An `AbortSignal`, or anything
   * with its `aborted`, `reason` and abort listeners (the gateway's `CallAbort`).
   */
  signal?: AbortLike | undefined;
}

/** Where a load finds and keeps what it learnt of the component's tools (`ToolRecord`). */
export interface ToolRecordStore {
  read(context: string): Promise<ToolDefinition[] | undefined>;
  write(context: string, tools: readonly ToolDefinition[]): Promise<void>;
}

/** Everything a handle needs to run its worker; built by `ModuleRegistry`. */
export interface ModuleHandleInit
  extends Pick<GuestWorkerData, 'wasiImports' | 'config' | 'filesRoot' | 'grants' | 'network'> {
  /**
   * The component's core modules, compiled and memory-capped, and the sandbox plan they were
   * capped by: asked for at each engine start, held only while the engine runs.
   */
  compile(): Promise<CompiledComponent>;
  /**
   * How long the engine (the worker thread) stays up after its last call ends, in ms (default
   * `DEFAULT_ENGINE_IDLE_MS`, 5 min); 0 keeps it resident from the load on.
   */
  engineIdleMs?: number | undefined;
  /** Where the load records the tools (absent: nothing recorded across loads; `tools/list` still answers from the load). */
  toolRecord?: ToolRecordStore | undefined;
  /**
   * The load lists the tools from the engine even if they are recorded, and records them again: a
   * reload (someone asked to look again; a plugin whose tools depend on its files would otherwise
   * keep what the first load saw).
   */
  relistTools?: boolean | undefined;
  manifest: Manifest;
  limits: ModuleLimits;
  dir: string;
  providers: Providers;
  meter: CreditMeter | undefined;
  logger: PluginLogger;
  /**
   * Where the guest's own lines go (`logging.log`, stdout, stderr), admitted by the module's rate:
   * its worker made each one visible line already (`oneLogLine`, at most `MAX_LOG_BYTES`), so the
   * registry hands its embedder's logger here, not `logger`'s second escaping (whose emoji scan
   * cost the main thread ~0.9 s a MiB of U+1F600 U+2764 U+FE0F). Absent: `logger`.
   */
  guestLogger?: PluginLogger | undefined;
  /** The worker's JS heap limit (default `WORKER_HEAP_MB`); WebAssembly memory is bounded apart. */
  workerHeapMb?: number | undefined;
  /** How long an engine start may take to instantiate the component (default `INSTANTIATE_TIMEOUT_MS`). */
  instantiateTimeoutMs?: number | undefined;
  /**
   * How long the main thread may wait without yielding for a lone call's answer, in ms (default
   * `ANSWER_SPIN_MS`, 0.08; 0 on a one-CPU machine; 0 never waits): see `AnswerSpin`.
   */
  answerSpinMs?: number | undefined;
  /**
   * The account of waiting argument bytes this handle shares with the other modules of its
   * registry (the gateway's total cap); absent, the handle has its own at the default cap.
   */
  waitingBudget?: WaitingBudget | undefined;
}

/** Counters for logs and benches. */
export interface HandleStats {
  calls: number;
  timeouts: number;
  traps: number;
  /** Engines started to replace one that failed (a timeout, a crash, a cancelled running call). */
  restarts: number;
  /** Engines (worker threads) started, for any reason; and those stopped for being idle. */
  engineStarts: number;
  idleStops: number;
  /** Calls cancelled by their caller, and how many of those stopped a running guest. */
  cancelled: number;
  stopped: number;
  /**
   * Calls refused `busy`: the module already held `MAX_WAITING_CALLS` waiting or
   * `MAX_WAITING_ARGUMENT_BYTES` of their arguments, or the gateway its total (`WaitingBudget`).
   */
  busy: number;
}

/**
 * One loaded plugin module: its own worker thread (`GuestWorker`), its own lock (`CallQueue`: one
 * guest call at a time, in order), its own clock (`Deadline`). Calls to different handles never
 * wait on each other; the main thread never runs guest code. A call that runs past its limit
 * terminates the worker; the next call starts a fresh one. A trap, an over-cap output or an
 * output that does not lift fails that call and the worker replaces its instance.
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
  readonly stats: HandleStats = { calls: 0, timeouts: 0, traps: 0, restarts: 0, engineStarts: 0, idleStops: 0, cancelled: 0, stopped: 0, busy: 0 };

  private live: GuestWorker | undefined;
  /** Its engine's starts and idle stops, and the wait after starts that failed. */
  private readonly starter: EngineStarter;
  /** The waiting argument bytes of this handle and of the other modules of its registry. */
  private readonly budget: WaitingBudget;
  private readonly calls: CallQueue;
  private readonly deadline = new Deadline(() => this.onDeadline());
  /** The main thread's short wait for a lone call's answer, and its backoff, across engines. */
  private readonly spin: AnswerSpin;
  private awaitingWorker = false;
  private closed = false;
  private readonly idle: IdleTimer;
  /** The module's log lines over time, whichever call or engine start logs them (`LogRate`). */
  private readonly logRate = new LogRate(monotonicMs);
  /** The host's lines about requests sent (handed to the fetch thread: they may have reached an allowed host). */
  private readonly networkLogRate = LogRate.forNetworkLines(monotonicMs);
  /**
   * Those about requests refused before anything left, by a rate of their own: sharing one, a
   * guest refused in a loop, call after call, used it up, and the line of a request it then sent
   * was dropped, counted in the rate's notice and never named.
   */
  private readonly refusedLogRate = LogRate.forNetworkLines(monotonicMs);
  /** Rates whose drops wait to be said, each with its lines' source, and the timer that says them (`sayDropsLater`). */
  private readonly unsaidDrops = new Map<LogRate, 'network' | 'host'>();
  private unsaidTimer: ReturnType<typeof setTimeout> | undefined;
  /** `invokeTool`s being asked of the credit meter: they count toward `MAX_WAITING_CALLS`. */
  private admitting = 0;
  private admittingBytes = 0;
  /** The tools as the load listed (or found recorded) them, schemas checked; `tools/list` answers from them. */
  private recordedTools: ToolDefinition[] | undefined;

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
    this.idle = new IdleTimer(checkedEngineIdleMs(init.engineIdleMs), () => this.onIdle());
    this.spin = new AnswerSpin(checkedAnswerSpinMs(init.answerSpinMs));
    this.budget = init.waitingBudget ?? new WaitingBudget();
    this.calls = new CallQueue(this.budget);
    this.starter = new EngineStarter({
      module: this.name,
      instantiateTimeoutMs: this.instantiateTimeoutMs,
      began: (restart) => {
        this.stats.engineStarts++;
        if (restart) this.stats.restarts++;
      },
      launch: (signal) => this.launch(signal),
    });
  }

  /** The short waits for lone calls' answers (`AnswerSpin`): the budget, and the waits that caught an answer or did not. */
  get answerWaits(): { budgetMs: number; caught: number; missed: number } {
    return { budgetMs: this.spin.budgetMs, caught: this.spin.caught, missed: this.spin.missed };
  }

  /**
   * Where the engine is: `stopped` (no worker thread: the state of an idle plugin), `starting`,
   * `running`, or `stopping` (an idle stop under way; a call arriving now waits for it, then
   * starts a fresh engine).
   */
  get engineState(): 'stopped' | 'starting' | 'running' | 'stopping' {
    if (this.live) return 'running';
    if (this.starter.starting) return 'starting';
    if (this.starter.isStopping) return 'stopping';
    return 'stopped';
  }

  /**
   * The load. When an earlier load of the same component in the same context recorded its tools
   * (`ToolRecordStore`), that is the proof and nothing starts: its own record, or one of any
   * module of these bytes made by an engine never told its module's name (`GuestWorker.toldName`). Otherwise the engine starts and the
   * component is instantiated, its tools are listed, checked and recorded, and the engine stops
   * again. Rejects with `PluginLoadError` if it cannot start, or if a tool's schema is not a JSON
   * Schema object (naming the tool). A `list-tools` that fails otherwise (a trap, its 1 s limit)
   * does not stop the load and records nothing: each `tools/list` then asks the engine. With
   * `engineIdleMs` 0 the engine starts here and stays.
   */
  async start(): Promise<void> {
    const recorded = this.init.relistTools ? undefined : ((await this.readRecord(this.recordContext(true))) ?? (await this.readRecord(this.recordContext(false))));
    if (recorded && this.idle.idleMs > 0) {
      this.recordedTools = recorded;
      return;
    }
    await this.ensureWorker();
    if (recorded) {
      this.recordedTools = recorded;
      return;
    }
    let tools: ToolDefinition[] | undefined;
    try {
      tools = await this.listTools();
    } catch (err) {
      if (err instanceof PluginCallError && err.cause instanceof ToolSchemaError) throw new PluginLoadError(err.cause.message);
    }
    if (tools) {
      this.recordedTools = tools;
      // Never told its name (the engine that listed them was not stopped since): the list is the bytes', whatever the name.
      const named = this.live?.toldName() ?? true;
      await this.init.toolRecord?.write(this.recordContext(named), tools).catch((err: unknown) => {
        this.init.logger.log('warn', `cannot record the module's tools (the next load starts its engine to list them): ${messageOf(err)}`, { module: this.name });
      });
    }
    if (this.idle.idleMs > 0 && this.live && this.calls.waiting.length === 0 && this.calls.inflight.length === 0) this.stopEngine(this.live);
  }

  /** A record read back is checked again as the guest's own answer was (it is a file on disk). */
  private async readRecord(context: string): Promise<ToolDefinition[] | undefined> {
    const tools = await this.init.toolRecord?.read(context);
    if (!tools) return undefined;
    try {
      return checkedTools(tools);
    } catch {
      return undefined;
    }
  }

  /** The guest's `metadata` export (1 s limit). */
  metadata(): Promise<PluginMetadata> {
    return this.enqueue('metadata', undefined, this.limits.metadataTimeoutMs) as Promise<PluginMetadata>;
  }

  /**
   * The module's tools: what the load recorded (without starting the engine), or, when the load
   * could not list them, the guest's `list-tools` export (1 s limit). Each schema is checked and
   * made explicit (`checkedTools`: `{}` becomes `{"type":"object"}`); a schema that is not a JSON
   * Schema object fails the call `invalid_output`, naming the tool.
   */
  async listTools(): Promise<ToolDefinition[]> {
    const recorded = this.recordedTools;
    if (recorded) {
      if (this.closed) throw this.unloadedError();
      return recorded.map((tool) => ({ ...tool }));
    }
    const tools = (await this.enqueue('list-tools', undefined, this.limits.metadataTimeoutMs)) as ToolDefinition[];
    try {
      return checkedTools(tools);
    } catch (err) {
      throw new PluginCallError('invalid_output', `module '${this.name}': list-tools: ${messageOf(err)}`, this.name, { cause: err });
    }
  }

  /**
   * The guest's `invoke-tool`. The guest's own `result` resolves (`ok: false` is its tool-error);
   * anything else rejects with `PluginCallError`. The credit meter is asked first, before the call
   * waits for this module's lock; a refusal never queues. A module already holding
   * `MAX_WAITING_CALLS` waiting (the calls the meter is still being asked about counted in) refuses
   * the call `busy` at once, before the meter is asked; so does one whose arguments would take the
   * module's waiting ones past `MAX_WAITING_ARGUMENT_BYTES`, or those of every module of the
   * registry past its total (`WaitingBudget`). A call the meter admitted is never then refused
   * `busy`. `options.signal` cancels it.
   */
  invokeTool(req: InvokeRequest, options: InvokeOptions = {}): Promise<ToolOutcome> {
    // Not an async function: without a credit meter the call is queued at once, and the promise
    // `enqueue` makes is the answer (an async wrapper would cost a frame and a promise per call,
    // and its answer two more turns of the microtask queue). A refusal still rejects, never throws.
    try {
      if (this.closed) throw this.unloadedError();
      const bytes = req.argumentsJson.length;
      if (this.waitingCalls >= MAX_WAITING_CALLS) throw this.busyError();
      if (this.waitingCalls > 0 && this.waitingArgumentBytes() + bytes > MAX_WAITING_ARGUMENT_BYTES) throw this.busyError(true);
      if (this.budget.refuses(bytes)) throw this.totalBusyError();
      const notYet = this.startRefusal();
      if (notYet) throw notYet;
      const signal = options.signal;
      if (signal?.aborted) throw this.cancelledError(req.name, signal.reason, 'before it was queued');
      const meter = this.init.meter;
      if (meter) return this.invokeMetered(meter, req, bytes, signal);
      return this.enqueueInvoke(req, signal);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** `invokeTool` with a credit meter: the meter is asked first, the call holding its place meanwhile. */
  private async invokeMetered(meter: CreditMeter, req: InvokeRequest, bytes: number, signal: AbortLike | undefined): Promise<ToolOutcome> {
    let admission: Admission;
    // The call holds its place while the meter is asked: a slow meter cannot gather unbounded calls.
    this.admitting++;
    this.admittingBytes += bytes;
    this.budget.held += bytes;
    try {
      admission = await meter.admit(this.name, { tool: req.name, callId: req.callId, caller: req.caller });
    } catch (err) {
      throw new PluginCallError('credit_refused', `credit check failed: ${messageOf(err)}`, this.name);
    } finally {
      this.admitting--;
      this.admittingBytes -= bytes;
      this.budget.held -= bytes; // and held again, in the same turn, as `enqueueInvoke` queues it
    }
    const refused = admission === false ? 'refused by the credit meter' : typeof admission === 'object' && !admission.ok ? admission.reason : undefined;
    if (refused !== undefined) throw new PluginCallError('credit_refused', refused, this.name);
    if (signal?.aborted) throw this.cancelledError(req.name, signal.reason, 'before it was queued');
    return this.enqueueInvoke(req, signal);
  }

  /** Its place was held since the checks in `invokeTool`: not refused busy now (a metered call was counted). */
  private enqueueInvoke(req: InvokeRequest, signal: AbortLike | undefined): Promise<ToolOutcome> {
    const request = new InvokeToolRequest(req.name, req.argumentsJson, req.callId, req.caller);
    return this.enqueue('invoke-tool', request, this.limits.maxExecutionMs, signal, true) as Promise<ToolOutcome>;
  }

  /** Calls held for this module's engine: queued, or being asked of the credit meter (those posted ahead are not counted). */
  private get waitingCalls(): number {
    return this.calls.waiting.length + this.admitting;
  }

  /** The arguments those calls hold (the JSON text's length), against `MAX_WAITING_ARGUMENT_BYTES`. */
  private waitingArgumentBytes(): number {
    return this.admittingBytes + this.calls.waitingBytes;
  }

  /** The call-id of the `invoke-tool` the guest is running now, if any. */
  get runningCallId(): string | undefined {
    const job = this.calls.inflight[0];
    if (!job || !this.live?.channel.isRunning(job.seq)) return undefined;
    return job.request?.callId;
  }

  /** Calls waiting for the lock (the running one, or the one first in line while the engine starts, excluded). */
  get queued(): number {
    return this.calls.queued;
  }

  /** Terminates the worker and rejects every pending call with `unloaded`. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.deadline.clear();
    this.idle.clear();
    for (const job of this.calls.takeAll()) job.reject(this.unloadedError());
    const live = this.live;
    this.live = undefined;
    const starting = this.starter.starting;
    this.starter.abandon(this.unloadedError()); // a start waiting its turn, compiling or instantiating ends now
    if (live) await live.kill();
    else if (starting) await starting.then((l) => l.kill(), () => undefined);
    await this.starter.stopped();
  }

  private get heapMb(): number {
    return this.init.workerHeapMb ?? WORKER_HEAP_MB;
  }

  private get instantiateTimeoutMs(): number {
    return this.init.instantiateTimeoutMs ?? INSTANTIATE_TIMEOUT_MS;
  }

  private unloadedError(): PluginCallError {
    return new PluginCallError('unloaded', `module '${this.name}' was unloaded`, this.name);
  }

  /** A call past the cap of waiting ones: refused, never queued; those waiting are untouched. */
  private busyError(bySize = false): PluginCallError {
    this.stats.busy++;
    const what = bySize ? ` holding ${(this.waitingArgumentBytes() / MIB).toFixed(1)} MiB of arguments` : '';
    return new PluginCallError('busy', `busy: module ${this.name} has ${this.waitingCalls} calls waiting${what}; try again later`, this.name);
  }

  /** A call past the gateway's total of waiting arguments (`WaitingBudget`): refused as `busyError`, its own module maybe holding none. */
  private totalBusyError(): PluginCallError {
    this.stats.busy++;
    const held = (this.budget.held / MIB).toFixed(1);
    const cap = (this.budget.cap / MIB).toFixed(1);
    return new PluginCallError('busy', `busy: module ${this.name}: the gateway's waiting calls hold ${held} MiB of arguments, its total cap ${cap} MiB; try again later`, this.name);
  }

  /** While a start that ran out of time waits to be tried again, calls are refused at once (`EngineStarter.refusal`). */
  private startRefusal(): PluginCallError | undefined {
    return this.live ? undefined : this.starter.refusal();
  }

  /** `placeHeld`: the caller checked the cap already and held its place since (`invokeTool`). */
  private enqueue(op: CallOp, request: ToolCallRequest | undefined, timeoutMs: number, signal?: AbortLike, placeHeld = false): Promise<unknown> {
    if (this.closed) return Promise.reject(this.unloadedError());
    if (!placeHeld && this.waitingCalls >= MAX_WAITING_CALLS) return Promise.reject(this.busyError());
    const notYet = this.startRefusal();
    if (notYet) return Promise.reject(notYet);
    return new Promise((resolve, reject) => {
      const job = new Job(op, request, timeoutMs, resolve, reject);
      if (signal) job.listen(signal, () => this.cancel(job, signal.reason));
      this.calls.add(job);
      this.pump();
    });
  }

  /**
   * The caller gave up on `job`. Not posted yet: taken out of the queue. Posted but not started:
   * marked, and the worker skips it. Running: the worker is terminated at once (as on a timeout),
   * the calls posted behind it go back to the front of the queue, and the next call starts a
   * fresh instance. In every case the call rejects `cancelled` now.
   */
  private cancel(job: Job, reason: unknown): void {
    if (this.closed || job.cancelled) return;
    const what = job.op === 'invoke-tool' ? `tool '${job.request?.name ?? ''}'` : job.op;
    if (this.calls.withdraw(job)) {
      this.cancelled(job, this.cancelledError(job.request?.name ?? '', reason, 'while it was queued'));
      this.abandonUnwantedStart();
      return;
    }
    const live = this.live;
    if (!live || !this.calls.inflight.includes(job)) return; // already answered
    if (live.answered() >= job.seq) {
      // Answered, its answer not taken yet (this thread was busy): it ran to its end, so it keeps
      // its answer, as one that finishes while it is cancelled does below. Looked at before the
      // mark, so what is answered here is the call's own run, never the worker's skip of it.
      this.calls.settleDone(live, this.settler);
      return this.pump();
    }
    live.channel.markCancelled(job.seq);
    if (!live.channel.isRunning(job.seq)) return this.cancelled(job, this.cancelledError(job.request?.name ?? '', reason, 'before it started'));
    // Running: what the worker finished before it is answered first, then the worker is stopped.
    this.calls.settleDone(live, this.settler);
    // It finished since `isRunning` looked (the worker runs on): answered above, so the worker
    // stays; else splice(-1) would take the last call posted instead, which never settles.
    const at = this.calls.inflight.indexOf(job);
    if (at < 0) return this.pump();
    this.live = undefined;
    this.starter.failed();
    this.calls.inflight.splice(at, 1);
    this.calls.requeueInflight();
    this.stats.stopped++;
    this.cancelled(job, this.cancelledError(job.request?.name ?? '', reason, 'while it ran; its instance was stopped'));
    this.engineFailed(live, 'a call running on it was cancelled');
    const started = monotonicMs();
    void live.kill().then(() => {
      const stopMs = Math.round((monotonicMs() - started) * 10) / 10;
      this.init.logger.log('info', `${what} was cancelled while it ran; its instance stopped in ${stopMs} ms and will be replaced`, { module: this.name, stopMs });
    });
    this.pump();
  }

  /**
   * A start that calls asked for and that no call waits for any more (each was cancelled, or its
   * client went away) is abandoned: it gives up its start turn, and an engine half-started is
   * terminated, rather than holding a turn (up to the 10 s instantiation limit for a component
   * whose top-level code spins) and then idling for `engineIdleMs`. The next call starts afresh.
   */
  private abandonUnwantedStart(): void {
    if (!this.awaitingWorker || this.live || this.calls.waiting.length > 0 || this.calls.inflight.length > 0) return;
    this.starter.abandon(new StartAbandoned());
  }

  private cancelled(job: Job, err: PluginCallError): void {
    job.cancelled = true;
    this.stats.cancelled++;
    job.reject(err);
  }

  private cancelledError(tool: string, reason: unknown, when: string): PluginCallError {
    const why = reason === undefined || (reason instanceof Error && reason.name === 'AbortError') ? '' : `: ${messageOf(reason)}`;
    return new PluginCallError('cancelled', `module '${this.name}': tool '${tool}' was cancelled ${when}${why}`, this.name);
  }

  /** Posts queued calls to the worker (starting one if there is none), then minds the idle clock. */
  private pump(): void {
    this.post();
    this.mindIdle();
  }

  /**
   * With nothing queued or in flight the idle clock runs (from the end of the last call); any call
   * stops it. Only a running engine is ever idle: one starting has a call waiting for it.
   */
  private mindIdle(): void {
    if (this.live && !this.closed && this.calls.waiting.length === 0 && this.calls.inflight.length === 0) this.idle.start();
    else this.idle.clear();
  }

  /**
   * The idle clock ran out. Checked again, since everything that happened since it started is
   * known here: a call queued or running keeps the engine (a stop racing a call loses).
   */
  private onIdle(): void {
    const live = this.live;
    if (this.closed || !live || this.calls.waiting.length > 0 || this.calls.inflight.length > 0) return;
    this.stopEngine(live);
    this.init.logger.log('debug', `engine stopped after ${this.idle.idleMs} ms idle; the next call starts it again`, { module: this.name });
  }

  /** Stops an engine that has no call: the worker thread ends and its memory goes with it. */
  private stopEngine(live: GuestWorker): void {
    this.live = undefined;
    this.stats.idleStops++;
    this.idle.clear();
    this.deadline.clear();
    this.starter.stoppedIdle(live.kill());
  }

  private post(): void {
    if (this.closed || this.calls.waiting.length === 0) return;
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
          // Every call waiting was waiting for this start: all fail now, unless a call may start a
          // fresh engine at once (a start given up for want of callers, its failures not adding up).
          const failure = this.starter.startFailed(err);
          if (failure) this.failWaiting(failure);
          this.pump();
        },
      );
      return;
    }
    if (this.calls.full) return;
    this.calls.post(live, this.posted);
    live.notifyPosted();
    this.awaitAnswers(live);
  }

  /** Each call as it is posted: counted once (a call posted again after a restart is not), and on the clock. */
  private readonly posted = (job: Job): void => {
    if (!job.counted) {
      job.counted = true;
      this.stats.calls++;
    }
    this.deadline.arm(job.timeoutMs);
  };

  private awaitAnswers(live: GuestWorker): void {
    if (this.calls.inflight.length === 0) return;
    live.awaitAnswers();
  }

  private onAnswers(live: GuestWorker): void {
    if (live !== this.live) return;
    this.calls.settleDone(live, this.settler);
    if (live.settled > 0) this.starter.answered();
    this.pump();
    if (live === this.live) this.awaitAnswers(live);
  }

  /**
   * An engine ended before its time (`how`: past a call's limit, gone, stopped by a cancel). If
   * it never answered a call, its start served nothing and counts as one that did not become ready:
   * otherwise a component that starts in nearly the whole instantiation limit, then spins in every
   * call, would hold a start turn (of the few the gateway shares) that long at every call. Once
   * such starts add up, the calls waiting fail with the wait instead of starting it again.
   */
  private engineFailed(live: GuestWorker, how: string): void {
    if (live.settled > 0) return;
    const wait = this.starter.servedNothing(`its engine answered no call before ${how}`);
    if (wait) this.failWaiting(wait);
  }

  /** Fails every call not posted yet with `failure` (a start failed, or starts that served nothing added up). */
  private failWaiting(failure: () => PluginCallError): void {
    for (const job of this.calls.takeWaiting()) {
      if (!job.counted) this.stats.calls++;
      job.reject(failure());
    }
  }

  private readonly settler: Settler = {
    fail: (job: Job, kind: GuestFailureKind, message: string): void => {
      if (kind === 'trap') this.stats.traps++;
      this.init.logger.log('warn', message, { module: this.name, kind });
      job.reject(new PluginCallError(kind, `module '${this.name}': ${message}`, this.name));
    },
    lost: (job: Job): void => {
      job.reject(new PluginCallError('crashed', `module '${this.name}': the worker's answer was lost`, this.name));
    },
  };

  /** The first call in flight is the one running: is it past its limit? Else wait until it could be. */
  private onDeadline(): void {
    const live = this.live;
    const job = this.calls.inflight[0];
    if (!live || !job) return;
    const now = monotonicMs();
    const left = timeLeft(live.channel, job.seq, job.timeoutMs, now);
    if (left.overdue) return this.onTimeout(live, job);
    this.deadline.fireIn(left.ms, now + left.ms);
  }

  private onTimeout(live: GuestWorker, job: Job): void {
    this.stats.timeouts++;
    this.live = undefined;
    this.starter.failed();
    this.calls.inflight.shift();
    this.calls.requeueInflight();
    void live.kill();
    const what = job.op === 'invoke-tool' ? `tool '${job.request?.name ?? ''}'` : job.op;
    this.init.logger.log('warn', `${what} ran past ${job.timeoutMs} ms; the instance was terminated and will be replaced`, { module: this.name });
    job.reject(new PluginCallError('timeout', `module '${this.name}': ${what} ran past its ${job.timeoutMs} ms limit`, this.name));
    this.engineFailed(live, "it ran past a call's limit");
    this.pump();
  }

  private ensureWorker(): Promise<GuestWorker> {
    if (this.live) return Promise.resolve(this.live);
    if (this.closed) return Promise.reject(this.unloadedError());
    return this.starter.start();
  }

  /** Starts an engine in its start turn, the core modules compiled again if no other engine holds them. */
  private async launch(signal: AbortSignal): Promise<GuestWorker> {
    if (this.closed) throw this.unloadedError();
    const { modules, sandbox, componentUrl } = await untilAborted(this.init.compile(), signal);
    return GuestWorker.start({ ...this.workerConfig(), componentUrl, coreModules: modules, sandbox }, this.heapMb, this.instantiateTimeoutMs, this.workerEvents, this.spin, signal);
  }

  /** What the worker is started with, less its checked JavaScript, compiled core modules and their sandbox plan. */
  private workerConfig(): Omit<GuestWorkerConfig, 'componentUrl' | 'coreModules' | 'sandbox'> {
    return {
      module: this.name,
      wasiImports: this.init.wasiImports,
      config: this.init.config,
      filesRoot: this.init.filesRoot,
      grants: this.init.grants,
      network: this.init.network,
      maxOutputBytes: this.limits.maxOutputBytes,
      maxMemoryBytes: this.limits.maxMemoryMb * MIB,
      maxLogBytes: MAX_LOG_BYTES,
      maxFileBytes: MAX_FILE_BYTES,
    };
  }

  /**
   * Everything the guest is given besides its bytes (its sandbox plan follows from the bytes and
   * the limits), its module's name among it, as one string: a tool record made in another context
   * (another module of the same bytes, other config, grants, files root, network or limits) is not
   * used. The name is the guest's to see (an llm provider is asked for it, a refusal names it), so
   * a list that follows it is another module's list. `named` false: the context of a list made by an
   * engine never told the name, the same for every module of the bytes (`module: null`, which no
   * name is, nor the nameless context records had before the name was in it).
   */
  private recordContext(named: boolean): string {
    const config = this.workerConfig();
    return JSON.stringify(named ? config : { ...config, module: null });
  }

  private readonly workerEvents: GuestWorkerEvents = {
    message: (live, msg) => this.onMessage(live, msg),
    ready: (live) => {
      if (this.closed) return false;
      this.live = live;
      return true;
    },
    gone: (live, why) => this.onWorkerGone(live, why),
    answers: (live) => this.onAnswers(live),
    unloaded: () => this.unloadedError(),
  };

  /**
   * Says the drops a rate could not say yet (a notice at most once a second) once it may: the
   * last drops of a burst were said only at a drop a second later, which may never come, so the
   * hosts a guest's dropped request lines name went unsaid. One timer for the handle's rates.
   */
  private sayDropsLater(rate: LogRate, source: 'network' | 'host'): void {
    this.unsaidDrops.set(rate, source);
    if (this.unsaidTimer !== undefined) return;
    let due = Number.POSITIVE_INFINITY;
    for (const r of this.unsaidDrops.keys()) due = Math.min(due, r.noticeDueInMs() ?? Number.POSITIVE_INFINITY);
    if (due === Number.POSITIVE_INFINITY) return this.unsaidDrops.clear();
    this.unsaidTimer = setTimeout(() => {
      this.unsaidTimer = undefined;
      for (const [r, s] of [...this.unsaidDrops]) {
        const notice = r.pendingNotice();
        if (notice !== undefined) this.init.logger.log('warn', notice, { module: this.name, source: s });
        if (r.noticeDueInMs() === undefined) this.unsaidDrops.delete(r);
      }
      const next = this.unsaidDrops.entries().next();
      if (!next.done) this.sayDropsLater(...next.value);
    }, due + 1);
    this.unsaidTimer.unref();
  }

  /** A message from the worker's port: a log line, a bridged host call, or an answer too large for its slot. */
  private onMessage(live: GuestWorker, msg: FromWorker): void {
    if (live !== this.live) return; // a terminated worker's last words
    switch (msg.type) {
      case 'done':
      case 'failed':
        live.portAnswers.set(msg.id, msg);
        return;
      case 'log': {
        // The host's request lines are admitted by their own rates: a guest using up its own, or
        // refused in a loop, cannot hide what it reached (a line not marked refused counts as sent).
        const rateOf = msg.source !== 'network' ? this.logRate : msg.sent === false ? this.refusedLogRate : this.networkLogRate;
        // A dropped line of requests sent names their hosts in the rate's notice: what the guest reached is said, if not line by line.
        const rate = rateOf.admit(Buffer.byteLength(msg.message, 'utf8'), msg.source === 'network' && msg.sent !== false ? (msg.targets ?? []) : []);
        // The host's lines (a request's, the worker's notes) are escaped here; the guest's were in its worker.
        const logger = msg.source === 'network' || msg.source === 'host' ? this.init.logger : (this.init.guestLogger ?? this.init.logger);
        if (rate.pass) logger.log(msg.level, msg.message, { module: this.name, source: msg.source });
        else if (rate.notice) this.init.logger.log('warn', rate.notice, { module: this.name, source: msg.source === 'network' ? 'network' : 'host' });
        else this.sayDropsLater(rateOf, msg.source === 'network' ? 'network' : 'host');
        return;
      }
      case 'host':
        void this.serveHost(live, msg);
        return;
      default:
        return;
    }
  }

  private async serveHost(live: GuestWorker, msg: Extract<FromWorker, { type: 'host' }>): Promise<void> {
    let reply: HostReply;
    // A signal per request, aborted from the engine's: the engine's lives as long as the engine
    // (the process's life, for a busy module), and listeners a provider leaves on a finished
    // request would pile up on it. Not AbortSignal.any: on Node 20 it leaks with a long-lived source.
    const request = new AbortController();
    const abort = (): void => request.abort(live.ended.reason);
    if (live.ended.aborted) abort();
    else live.ended.addEventListener('abort', abort, { once: true });
    try {
      const value = await runProvider(this.init.providers, this.name, msg.capability, msg.method, msg.args, request.signal);
      reply = { seq: msg.seq, ok: true, value };
    } catch (err) {
      reply = { seq: msg.seq, ok: false, error: `${msg.capability}: ${messageOf(err)}` };
    } finally {
      live.ended.removeEventListener('abort', abort);
    }
    if (live !== this.live) return;
    live.replyToHost(reply, msg.capability);
  }

  private onWorkerGone(live: GuestWorker, why: string): void {
    if (live !== this.live) return;
    this.calls.settleDone(live, this.settler); // what it answered before it went stays answered
    this.live = undefined;
    this.starter.failed();
    live.closePorts();
    this.init.logger.log('error', why, { module: this.name });
    const job = this.calls.inflight.shift();
    this.calls.requeueInflight();
    if (job) job.reject(new PluginCallError('crashed', `module '${this.name}': ${why}`, this.name));
    this.engineFailed(live, `it ended: ${why}`);
    this.pump();
  }
}

