/**
 * The worker thread of one plugin module. It instantiates the transpiled component, runs one call
 * at a time as the main thread posts them on the call channel, and replaces its instance after any
 * failure that is not the guest's own `tool-error`. The main thread keeps the clock and terminates
 * this thread when a call runs too long.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { CallChannel, DONE, NAME_TOLD, Op, REQ, RUNNING, SENT, STARTED_F64, STOP, monotonicMs } from './call-channel.js';
import { checkAnswer } from './answer-check.js';
import { CoreInstances } from './core-instances.js';
import { chattyImports, cutUtf8, wasiImports, type HostSink } from './host-imports.js';
import { oneLogLine } from './log-line.js';
import { RequestLines } from './request-lines.js';
import { HostInputTooLarge, InvalidOutput, LiftMeter, OutputTooLarge } from './lift-meter.js';
import type { FromWorker, GuestFailureKind, GuestWorkerData, PortRequest, TokenUsage, ToolCallRequest, ToolOutcome } from './protocol.js';
import type { WasmModule } from '../wasm-api.js';
import { MAX_EXECUTION_MS, MAX_HOST_STRING_BYTES, MAX_LOG_BYTES_PER_CALL, MAX_LOG_LINES_PER_CALL, MAX_OUTPUT_BYTES } from '../limits.js';
import { GuestNetwork } from '../network/guest-network.js';

interface PluginExports {
  metadata(): unknown;
  listTools(): unknown;
  invokeTool(request: ToolCallRequest): { content: string; usage?: unknown };
}

type Instantiate = (
  getCoreModule: (name: string) => WasmModule,
  imports: Record<string, unknown>,
  instantiateCore: CoreInstances['instantiateCore'],
) => Promise<Record<string, PluginExports>>;

/*
 * jco's generated bindings read `process.env.JCO_DEBUG` in every internal debug-log call, several
 * per guest call. Node's `process.env` answers each read through a C++ interceptor; this thread's
 * environment is empty (`spawnWorker` starts it with `env: {}`) and private to it, so it becomes a
 * plain empty object: a guest call gets ~30% cheaper (7.6 -> 5.2 µs for the echo fixture).
 */
process.env = { ...process.env };

const data = workerData as GuestWorkerData;
/** Installed before jco's module is imported: it meters the globals jco reads guest memory with. */
const meter = new LiftMeter(data.maxOutputBytes, MAX_HOST_STRING_BYTES);
meter.install();
const port = parentPort!;
const channel = new CallChannel(data.channel);
/** Logs, bridged host calls and oversized answers share one port, so they arrive in order. */
const send = (message: FromWorker): void => {
  data.callPort.postMessage(message);
  Atomics.add(channel.ints, SENT, 1);
};
/**
 * Log lines are budgeted per call, so a guest logging in a tight loop cannot flood the main
 * thread's message queue: past the budget lines are dropped and counted, and one warning says so.
 * The first line that does not fit closes the budget for the rest of the call: a dropped line then
 * costs a count, never the escaping that makes a line visible (up to ~25 ms for 64 KiB of NULs),
 * so a guest cannot spend its call's time, or the host's, making lines nobody will read.
 */
const budget = { bytes: 0, lines: 0, dropped: 0 };
/** The host's lines about the call's requests: budgets of their own, sent and refused apart (`request-lines.ts`). */
const requestLines = new RequestLines(data.maxLogBytes);
const sink: HostSink = {
  log(level, raw, source) {
    if (budget.dropped > 0 || budget.lines >= MAX_LOG_LINES_PER_CALL || budget.bytes >= MAX_LOG_BYTES_PER_CALL) {
      budget.dropped++;
      return;
    }
    // Escaping never makes a line shorter, and the cuts keep all but the last character or escape
    // (at most 10 bytes): a line surely past the room is dropped before it is cut or escaped.
    const room = MAX_LOG_BYTES_PER_CALL - budget.bytes;
    if (source !== 'host' && Math.min(Buffer.byteLength(raw, 'utf8'), data.maxLogBytes - 10) > room) {
      budget.dropped++;
      return;
    }
    // The guest's words cut to a line's cap, as one visible line, cut again to it (an escape is longer than its character).
    const message = source === 'host' ? raw : oneLogLine(cutUtf8(raw, data.maxLogBytes), data.maxLogBytes);
    // Bytes, not UTF-16 units: a line of 3-byte characters costs three times its `length`.
    const bytes = Buffer.byteLength(message, 'utf8');
    if (bytes > room) {
      budget.dropped++;
      return;
    }
    budget.lines++;
    budget.bytes += bytes;
    send({ type: 'log', level, message, source });
  },
  post: (message) => send(message),
  toldName: () => void Atomics.add(channel.ints, NAME_TOLD, 1),
};

/**
 * The guest's fetch: refused outright without a granted `[network]` list; otherwise checked and
 * performed by the fetch thread, with the same 1 MiB budget per call as the output cap.
 */
const network = new GuestNetwork(
  data.network?.allow ?? null,
  { maxBodyBytesPerCall: MAX_OUTPUT_BYTES, maxRequestBodyBytes: MAX_OUTPUT_BYTES, timeoutMs: MAX_EXECUTION_MS },
  (entry) => {
    const line = requestLines.add(entry);
    if (line) send({ type: 'log', level: line.level, message: line.message, source: 'network', sent: line.sent, targets: line.targets });
  },
);

function settleLogBudget(): void {
  if (budget.dropped > 0) {
    send({
      type: 'log',
      level: 'warn',
      message: `dropped ${budget.dropped} log line(s) over the per-call budget (${MAX_LOG_LINES_PER_CALL} lines, ${MAX_LOG_BYTES_PER_CALL} bytes)`,
      source: 'host',
    });
  }
  for (const note of requestLines.settle()) send({ type: 'log', level: note.level, message: note.message, source: 'network', sent: note.sent, targets: note.targets });
  budget.bytes = 0;
  budget.lines = 0;
  budget.dropped = 0;
}

let instantiateComponent: Instantiate;
let imports: Record<string, unknown>;
let instances: CoreInstances | undefined;
let plugin: PluginExports | undefined;

async function freshInstance(): Promise<void> {
  plugin = undefined;
  instances = new CoreInstances(data.sandbox, data.coreModules, meter);
  const getCoreModule = (name: string): WasmModule => {
    const module = data.coreModules[name];
    if (!module) throw new Error(`the transpiled component asks for an unknown core module ${name}`);
    return module;
  };
  const exports = await instantiateComponent(getCoreModule, imports, instances.instantiateCore);
  const found = exports['chatty:plugin/plugin@0.3.0'];
  if (!found) throw new Error('the component does not export chatty:plugin/plugin@0.3.0');
  plugin = found;
}

function classify(err: unknown): { kind: GuestFailureKind; message: string } {
  if (err instanceof OutputTooLarge) return { kind: 'output_too_large', message: err.message };
  const text = err instanceof Error ? err.message : String(err);
  if (err instanceof HostInputTooLarge) return { kind: 'trap', message: `the guest trapped: ${text}` };
  // jco's lift throws TypeError on a bad discriminant and RangeError on a view past the memory.
  if (err instanceof InvalidOutput || err instanceof TypeError || err instanceof RangeError) {
    return { kind: 'invalid_output', message: `the guest's answer did not lift: ${text}` };
  }
  return { kind: 'trap', message: `the guest trapped: ${text}${memoryNote()}` };
}

/**
 * Said only when memory is the likely cause: a memory that has used three quarters of its cap or
 * more (an allocator asks for more than it needs at once, so "at the cap" is too strict).
 */
function memoryNote(): string {
  const capBytes = data.sandbox.memoryPagesEach * 65536;
  const fullest = capBytes > 0 ? instances?.fullest(capBytes) : undefined;
  if (!fullest || fullest.fraction < 0.75) return '';
  const mib = (n: number): string => (n % (1024 * 1024) === 0 ? String(n / (1024 * 1024)) : (n / (1024 * 1024)).toFixed(1));
  const shared = data.sandbox.memories > 1 ? `, max_memory_mb shared among its ${data.sandbox.memories} memories` : ', max_memory_mb';
  return ` (linear memory ${mib(fullest.bytes)} MiB of its ${mib(capBytes)} MiB cap${shared})`;
}

function isToolError(err: unknown): err is { kind: string; message: string } {
  return (
    typeof err === 'object' && err !== null && !(err instanceof Error) &&
    typeof (err as { kind?: unknown }).kind === 'string' && typeof (err as { message?: unknown }).message === 'string'
  );
}

type Outcome = { value: unknown } | { failed: GuestFailureKind; message: string };

function failure(err: unknown): Outcome {
  const { kind, message } = classify(err);
  plugin = undefined; // jco marks the instance trapped: the next call gets a fresh one
  return { failed: kind, message };
}

function runNow(op: Op, request: ToolCallRequest | undefined): Outcome {
  try {
    const p = plugin!;
    if (op === Op.Metadata) return { value: checkAnswer('metadata', metered('metadata', () => p.metadata()), data.maxOutputBytes) };
    if (op === Op.ListTools) return { value: checkAnswer('list-tools', metered('list-tools', () => p.listTools()), data.maxOutputBytes) };
    if (!request) throw new Error('the call\'s request was lost on its way to the worker');
    let outcome: ToolOutcome;
    try {
      const result = metered('invoke-tool', () => p.invokeTool(request));
      outcome = { ok: true, value: { content: result.content, usage: result.usage as TokenUsage | undefined } };
    } catch (err) {
      if (!isToolError(err)) throw err;
      outcome = { ok: false, error: { kind: err.kind, message: err.message } } as ToolOutcome;
    }
    return { value: checkAnswer('invoke-tool', outcome, data.maxOutputBytes) };
  } catch (err) {
    return failure(err);
  }
}

/** Runs one guest export with the lift meter open, so its answer is read under the cap. */
function metered<T>(what: string, run: () => T): T {
  meter.begin(what);
  try {
    return run();
  } finally {
    meter.end();
  }
}

async function runFresh(op: Op, request: ToolCallRequest | undefined): Promise<Outcome> {
  try {
    await freshInstance();
  } catch (err) {
    return failure(err);
  }
  return runNow(op, request);
}

/** Into the slot when it fits, else on the port (before `DONE` moves, so the main thread finds it). */
function answer(seq: number, op: Op, outcome: Outcome): void {
  if ('failed' in outcome) {
    if (!channel.writeFailure(seq, outcome.failed, outcome.message)) {
      channel.markOnPort(seq);
      send({ type: 'failed', id: seq, kind: outcome.failed, message: outcome.message });
    }
    return;
  }
  if (op === Op.InvokeTool && channel.writeOutcome(seq, outcome.value as ToolOutcome)) return;
  channel.markOnPort(seq);
  try {
    send({ type: 'done', id: seq, value: outcome.value });
  } catch (err) {
    send({ type: 'failed', id: seq, kind: 'invalid_output', message: `the guest's answer cannot be passed on: ${err instanceof Error ? err.message : String(err)}` });
  }
}

/**
 * Runs calls as the main thread posts them, in order, one at a time. Between calls the thread
 * sleeps in `Atomics.wait`; a queue of posted calls runs back to back. It leaves the loop only
 * to re-instantiate (asynchronously) after a failure, and returns when told to stop.
 */
async function serve(): Promise<void> {
  const ints = channel.ints;
  let seq = 0;
  for (;;) {
    while (Atomics.load(ints, REQ) === seq) {
      if (Atomics.load(ints, STOP) !== 0) return;
      Atomics.wait(ints, REQ, seq);
    }
    if (Atomics.load(ints, STOP) !== 0) return;
    seq++;
    channel.f64[STARTED_F64] = monotonicMs();
    Atomics.store(ints, RUNNING, seq);
    settleLogBudget(); // whatever was logged between calls (instantiation, a start function)
    network.startCall();
    const slot = channel.readRequest(seq);
    const request = slot.onPort ? (receiveMessageOnPort(data.callPort)?.message as PortRequest | undefined)?.request : slot.request;
    // After RUNNING is stamped: a cancel the main thread marked before it saw this call running.
    const outcome: Outcome = channel.isCancelled(seq)
      ? { failed: 'cancelled', message: 'cancelled before it started' }
      : plugin
        ? runNow(slot.op, request)
        : await runFresh(slot.op, request);
    settleLogBudget(); // before the answer, so the note about dropped lines arrives with the call
    answer(seq, slot.op, outcome);
    Atomics.store(ints, DONE, seq);
    Atomics.notify(ints, DONE);
  }
}

/**
 * Defence in depth behind the name and JavaScript checks: from any function, `.constructor` is
 * the way back to `Function` (and so to `eval`). Nothing this worker runs needs it, so it is
 * removed from the four function prototypes before jco's code is imported.
 */
function sealFunctionConstructors(): void {
  const prototypes = [
    Function.prototype,
    Object.getPrototypeOf(async function () {}) as object,
    Object.getPrototypeOf(function* () {}) as object,
    Object.getPrototypeOf(async function* () {}) as object,
  ];
  for (const proto of prototypes) Object.defineProperty(proto, 'constructor', { value: undefined, writable: false, configurable: false });
}

async function main(): Promise<void> {
  try {
    // preview2-shim first (it is ours), then the seal, then jco's checked bindings.
    const wasi = await wasiImports(data.wasiImports, sink, network);
    sealFunctionConstructors();
    const mod = (await import(data.componentUrl)) as { instantiate: Instantiate };
    instantiateComponent = mod.instantiate;
    imports = { ...chattyImports(data, sink, network), ...wasi };
    await freshInstance();
  } catch (err) {
    port.postMessage({ type: 'init-failed', message: err instanceof Error ? err.message : String(err) } satisfies FromWorker);
    return;
  }
  port.postMessage({ type: 'ready' } satisfies FromWorker);
  await serve();
}

void main();
