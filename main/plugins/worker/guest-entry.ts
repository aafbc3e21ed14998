/**
 * The worker thread of one plugin module. It instantiates the transpiled component, runs one call
 * at a time as the main thread sends them, and replaces its instance after any failure that is not
 * the guest's own `tool-error`. The main thread keeps the clock and terminates this thread when a
 * call runs too long.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { chattyImports, wasiImports, type HostSink } from './host-imports.js';
import { InvalidOutput, OutputGuard, OutputTooLarge } from './output-guard.js';
import type { CallMessage, FromWorker, GuestFailureKind, GuestWorkerData, ToolCallRequest } from './protocol.js';
import type { WasmModule } from '../wasm-api.js';
import { MAX_LOG_BYTES_PER_CALL, MAX_LOG_LINES_PER_CALL } from '../limits.js';

interface PluginExports {
  metadata(): unknown;
  listTools(): unknown;
  invokeTool(request: ToolCallRequest): { content: string; usage?: unknown };
}

type Instantiate = (
  getCoreModule: (name: string) => WasmModule,
  imports: Record<string, unknown>,
  instantiateCore: OutputGuard['instantiateCore'],
) => Promise<Record<string, PluginExports>>;

const data = workerData as GuestWorkerData;
const port = parentPort!;
const send = (message: FromWorker): void => port.postMessage(message);
/**
 * Log lines are budgeted per call, so a guest logging in a tight loop cannot flood the main
 * thread's message queue: past the budget lines are dropped and counted, and one warning says so.
 */
const budget = { bytes: 0, lines: 0, dropped: 0 };
const sink: HostSink = {
  log(level, message, source) {
    if (budget.lines >= MAX_LOG_LINES_PER_CALL || budget.bytes + message.length > MAX_LOG_BYTES_PER_CALL) {
      budget.dropped++;
      return;
    }
    budget.lines++;
    budget.bytes += message.length;
    send({ type: 'log', level, message, source });
  },
  post: (message) => send(message),
};

function settleLogBudget(): void {
  if (budget.dropped > 0) {
    send({
      type: 'log',
      level: 'warn',
      message: `dropped ${budget.dropped} log line(s) over the per-call budget (${MAX_LOG_LINES_PER_CALL} lines, ${MAX_LOG_BYTES_PER_CALL} bytes)`,
      source: 'host',
    });
  }
  budget.bytes = 0;
  budget.lines = 0;
  budget.dropped = 0;
}

let instantiateComponent: Instantiate;
let imports: Record<string, unknown>;
let guard: OutputGuard;
let plugin: PluginExports | undefined;

async function freshInstance(): Promise<void> {
  plugin = undefined;
  guard = new OutputGuard(data.maxOutputBytes, data.maxLogBytes);
  const getCoreModule = (name: string): WasmModule => {
    const module = data.coreModules[name];
    if (!module) throw new Error(`the transpiled component asks for an unknown core module ${name}`);
    return module;
  };
  const exports = await instantiateComponent(getCoreModule, imports, guard.instantiateCore);
  const found = exports['chatty:plugin/plugin@0.3.0'];
  if (!found) throw new Error('the component does not export chatty:plugin/plugin@0.3.0');
  plugin = found;
}

function classify(err: unknown): { kind: GuestFailureKind; message: string } {
  if (err instanceof OutputTooLarge) return { kind: 'output_too_large', message: err.message };
  const text = err instanceof Error ? err.message : String(err);
  if (err instanceof InvalidOutput) return { kind: 'invalid_output', message: `the guest's answer did not lift: ${text}` };
  if (err instanceof TypeError) return { kind: 'invalid_output', message: `the guest's answer did not lift: ${text}` };
  const memory = guard?.memory;
  const note = memory
    ? ` (linear memory ${(memory.buffer.byteLength / (1024 * 1024)).toFixed(1)} MiB of its ${data.maxMemoryBytes / (1024 * 1024)} MiB cap, max_memory_mb)`
    : '';
  return { kind: 'trap', message: `the guest trapped: ${text}${note}` };
}

function isToolError(err: unknown): err is { kind: string; message: string } {
  return (
    typeof err === 'object' && err !== null && !(err instanceof Error) &&
    typeof (err as { kind?: unknown }).kind === 'string' && typeof (err as { message?: unknown }).message === 'string'
  );
}

async function handle(msg: CallMessage): Promise<void> {
  settleLogBudget(); // whatever was logged between calls (instantiation, a start function)
  const reply = await run(msg);
  settleLogBudget(); // before the answer, so the note about dropped lines arrives with the call
  try {
    send(reply);
  } catch (err) {
    send({ type: 'failed', id: msg.id, kind: 'invalid_output', message: `the guest's answer cannot be passed on: ${err instanceof Error ? err.message : String(err)}` });
  }
}

async function run(msg: CallMessage): Promise<FromWorker> {
  try {
    if (!plugin) await freshInstance();
    const p = plugin!;
    if (msg.op === 'metadata') return { type: 'done', id: msg.id, value: p.metadata() };
    if (msg.op === 'list-tools') return { type: 'done', id: msg.id, value: p.listTools() };
    try {
      const result = p.invokeTool(msg.request!);
      return { type: 'done', id: msg.id, value: { ok: true, value: { content: result.content, usage: result.usage } } };
    } catch (err) {
      if (!isToolError(err)) throw err;
      return { type: 'done', id: msg.id, value: { ok: false, error: { kind: err.kind, message: err.message } } };
    }
  } catch (err) {
    const { kind, message } = classify(err);
    plugin = undefined; // jco marks the instance trapped: the next call gets a fresh one
    return { type: 'failed', id: msg.id, kind, message };
  }
}

async function main(): Promise<void> {
  try {
    const mod = (await import(data.componentUrl)) as { instantiate: Instantiate };
    instantiateComponent = mod.instantiate;
    imports = { ...chattyImports(data, sink), ...(await wasiImports(data.wasiImports, sink)) };
    await freshInstance();
  } catch (err) {
    send({ type: 'init-failed', message: err instanceof Error ? err.message : String(err) });
    return;
  }
  let chain = Promise.resolve();
  port.on('message', (msg: CallMessage) => {
    if (msg.type !== 'call') return;
    chain = chain.then(() => handle(msg));
  });
  send({ type: 'ready' });
}

void main();
