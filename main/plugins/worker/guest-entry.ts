/**
 * The worker thread of one plugin module. It instantiates the transpiled component, runs one call
 * at a time as the main thread sends them, and replaces its instance after any failure that is not
 * the guest's own `tool-error`. The main thread keeps the clock and terminates this thread when a
 * call runs too long.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { chattyImports, wasiImports, type HostSink } from './host-imports.js';
import { OutputGuard, OutputTooLarge } from './output-guard.js';
import type { CallMessage, FromWorker, GuestFailureKind, GuestWorkerData, ToolCallRequest } from './protocol.js';
import type { WasmModule } from '../wasm-api.js';

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
const sink: HostSink = {
  log: (level, message, source) => send({ type: 'log', level, message, source }),
  post: (message) => send(message),
};

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
  try {
    if (!plugin) await freshInstance();
    const p = plugin!;
    if (msg.op === 'metadata') return send({ type: 'done', id: msg.id, value: p.metadata() });
    if (msg.op === 'list-tools') return send({ type: 'done', id: msg.id, value: p.listTools() });
    try {
      const result = p.invokeTool(msg.request!);
      send({ type: 'done', id: msg.id, value: { ok: true, value: { content: result.content, usage: result.usage } } });
    } catch (err) {
      if (!isToolError(err)) throw err;
      send({ type: 'done', id: msg.id, value: { ok: false, error: { kind: err.kind, message: err.message } } });
    }
  } catch (err) {
    const { kind, message } = classify(err);
    plugin = undefined; // jco marks the instance trapped: the next call gets a fresh one
    send({ type: 'failed', id: msg.id, kind, message });
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
