import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { PluginCallError, PluginLoadError, messageOf } from './errors.js';
import { INSTANTIATE_TIMEOUT_MS, MAX_FILE_BYTES, MAX_LOG_BYTES, MIB, WORKER_HEAP_MB } from './limits.js';
import type { ExecutionMode, Manifest, ModuleInfo, ModuleLimits } from './manifest.js';
import { runProvider, type Admission, type CreditMeter, type PluginLogger, type Providers } from './providers.js';
import { spawnWorker } from './spawn.js';
import type {
  CallOp,
  FromWorker,
  GuestWorkerData,
  HostReply,
  PluginMetadata,
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
  extends Pick<GuestWorkerData, 'componentUrl' | 'coreModules' | 'wasiImports' | 'config' | 'filesRoot' | 'grants'> {
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
  id?: number;
  timer?: NodeJS.Timeout;
}

interface Live {
  worker: Worker;
  hostPort: MessagePort;
  control: Int32Array;
}

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
  private readonly queue: Job[] = [];
  private running: Job | undefined;
  private nextId = 0;
  private closed = false;
  private spawned = 0;

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
    return this.queue.length;
  }

  /** Terminates the worker and rejects every pending call with `unloaded`. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pending = [...(this.running ? [this.running] : []), ...this.queue.splice(0)];
    this.running = undefined;
    for (const job of pending) {
      clearTimeout(job.timer);
      job.reject(this.unloadedError());
    }
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
      this.queue.push({ op, request, timeoutMs, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    if (this.running || this.closed) return;
    const job = this.queue.shift();
    if (!job) return;
    this.running = job;
    this.stats.calls++;
    this.ensureWorker().then(
      (live) => {
        if (this.running !== job) return; // closed meanwhile
        job.id = ++this.nextId;
        job.timer = setTimeout(() => this.onTimeout(job), job.timeoutMs);
        live.worker.postMessage({ type: 'call', id: job.id, op: job.op, request: job.request });
      },
      (err: unknown) => {
        if (this.running !== job) return;
        this.finish(job, new PluginCallError('crashed', `module '${this.name}' could not start: ${messageOf(err)}`, this.name));
      },
    );
  }

  private finish(job: Job, outcome: { value: unknown } | Error): void {
    if (this.running !== job) return;
    clearTimeout(job.timer);
    this.running = undefined;
    if (outcome instanceof Error) job.reject(outcome);
    else job.resolve(outcome.value);
    this.pump();
  }

  private onTimeout(job: Job): void {
    if (this.running !== job) return;
    this.stats.timeouts++;
    const live = this.live;
    this.live = undefined;
    if (live) void this.kill(live);
    const what = job.op === 'invoke-tool' ? `tool '${job.request?.name ?? ''}'` : job.op;
    this.init.logger.log('warn', `${what} ran past ${job.timeoutMs} ms; the instance was terminated and will be replaced`, { module: this.name });
    this.finish(job, new PluginCallError('timeout', `module '${this.name}': ${what} ran past its ${job.timeoutMs} ms limit`, this.name));
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
    const control = new SharedArrayBuffer(4);
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
      control,
      hostPort: port2,
    };
    const worker = spawnWorker('guest-entry', {
      workerData: data,
      transferList: [port2],
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb },
    });
    const live: Live = { worker, hostPort: port1, control: new Int32Array(control) };
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
        this.onMessage(live, msg);
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

  private onMessage(live: Live, msg: FromWorker): void {
    if (live !== this.live) return; // a terminated worker's last words
    const job = this.running;
    switch (msg.type) {
      case 'done':
        if (job && job.id === msg.id) this.finish(job, { value: msg.value });
        return;
      case 'failed':
        if (!job || job.id !== msg.id) return;
        if (msg.kind === 'trap') this.stats.traps++;
        this.init.logger.log('warn', msg.message, { module: this.name, kind: msg.kind });
        this.finish(job, new PluginCallError(msg.kind, `module '${this.name}': ${msg.message}`, this.name));
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
    this.live = undefined;
    live.hostPort.close();
    this.init.logger.log('error', why, { module: this.name });
    const job = this.running;
    if (job) this.finish(job, new PluginCallError('crashed', `module '${this.name}': ${why}`, this.name));
  }

  private async kill(live: Live): Promise<void> {
    live.hostPort.close();
    // Wake a worker parked in Atomics.wait so terminate() never waits on it.
    Atomics.store(live.control, 0, 1);
    Atomics.notify(live.control, 0);
    await live.worker.terminate().catch(() => undefined);
  }
}
