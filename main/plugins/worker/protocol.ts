import type { MessagePort } from 'node:worker_threads';
import type { WasmModule } from '../wasm-api.js';

/**
 * Messages between a module's worker thread and its `ModuleHandle` on the main thread. The guest
 * runs only in the worker; calls and their answers go through the call channel
 * (`call-channel.ts`), the rest (logs, bridged host calls, what does not fit the channel) as
 * messages on `callPort`. The main thread keeps the clock.
 */

/** What `tool-call-request` carries (camelCase, as jco lifts/lowers it). */
export interface ToolCallRequest {
  name: string;
  argumentsJson: string;
  callId: string;
  caller?: string | undefined;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface ToolDefinition {
  name: string;
  description: string;
  parametersSchema: string;
}

/** What a plugin may be granted. `network` is asked by the manifest's `[network]` table, never by the component's metadata. */
export type Capability = 'llm' | 'config' | 'logging' | 'file' | 'billing' | 'network';

export interface PluginMetadata {
  name: string;
  version: string;
  description: string;
  requestedCapabilities: Capability[];
  configKeys: { name: string; description: string; required: boolean }[];
}

export type ToolErrorKind = 'unknown-tool' | 'invalid-arguments' | 'denied' | 'failed';

export type ToolOutcome =
  | { ok: true; value: { content: string; usage?: TokenUsage | undefined } }
  | { ok: false; error: { kind: ToolErrorKind; message: string } };

/** Whether a bridged capability may be used: granted, refused by the embedder, or without provider. */
export type GrantState = 'granted' | 'not-granted' | 'not-configured';

export interface GuestWorkerData {
  module: string;
  /** jco's checked JavaScript as a `data:` URL: the text whose hash the cache recorded, not a path read again. */
  componentUrl: string;
  /** Compiled core modules by the file name jco asks for (memory already capped). */
  coreModules: Record<string, WasmModule>;
  /** Unversioned WASI interfaces the component imports (served by preview2-shim). */
  wasiImports: string[];
  /** The manifest's `[config]`, or null when `config` is not granted. */
  config: Record<string, string> | null;
  /** Absolute `[files] root`, or null when `file` is not granted. */
  filesRoot: string | null;
  grants: { llm: GrantState; billing: GrantState };
  /** The manifest's `[network] allow` entries, or null when `network` is not granted (no network at all). */
  network: { allow: readonly string[] } | null;
  maxOutputBytes: number;
  maxMemoryBytes: number;
  maxLogBytes: number;
  maxFileBytes: number;
  /** What the load-time inspection of the component decided (memory and table budgets). */
  sandbox: GuestSandbox;
  /** Int32 slot 0: 0 while a bridged host call is pending, 1 once its reply is on `hostPort`. */
  control: SharedArrayBuffer;
  hostPort: MessagePort;
  /** The call channel (`CallChannel`): counters and a ring of call slots. */
  channel: SharedArrayBuffer;
  /** The worker's end: `FromWorker` messages out; in, `PortRequest`s for calls too large for a slot. */
  callPort: MessagePort;
}

/**
 * The sandbox plan for one component, decided at load from its bytes and jco's output: how many
 * linear memories and tables its core instances may create in all, so that the per-plugin caps
 * can be divided among them and checked again as each core instance is created.
 */
export interface GuestSandbox {
  /** Linear memories the component's core instances define, counted over every instantiation. */
  memories: number;
  /** Tables they define, counted the same way. */
  tables: number;
  /** The cap of each memory, in 64 KiB pages: `max_memory_mb` divided among `memories`. */
  memoryPagesEach: number;
  /** The cap of each table, in entries: the plugin's table budget divided among `tables`. */
  tableEntriesEach: number;
  /** Defined memories and tables of each core module, by the file name jco asks for. */
  perModule: Record<string, { memories: number; tables: number }>;
}

/** A call whose request did not fit its slot, read by the worker with `receiveMessageOnPort`. */
export interface PortRequest {
  seq: number;
  request: ToolCallRequest;
}

export type CallOp = 'metadata' | 'list-tools' | 'invoke-tool';

/**
 * A failure outside the guest's own result; the worker replaces its instance after sending it,
 * except for `cancelled` (a call skipped before it started: the instance never ran it).
 */
export type GuestFailureKind = 'trap' | 'output_too_large' | 'invalid_output' | 'cancelled';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
/** Who a log line is from: the guest (its `logging.log`, stdout, stderr), the host, or the host's lines about the call's requests (a budget and rate of their own). */
export type LogSource = 'guest' | 'stdout' | 'stderr' | 'host' | 'network';

export type FromWorker =
  | { type: 'ready' }
  | { type: 'init-failed'; message: string }
  /** An answer that did not fit the channel's slot (`id` is the call's seq). */
  | { type: 'done'; id: number; value: unknown }
  | { type: 'failed'; id: number; kind: GuestFailureKind; message: string }
  /**
   * A log line. `sent`, on a `network` line: its request was handed to the fetch thread (it may
   * have reached an allowed host), not refused before anything left; the handle admits the two
   * kinds by rates of their own, so refused requests cannot use up what a sent one's line needs.
   */
  /** `targets`: a network line's hosts of requests sent (its own; a note's, those it names), named by the handle's rate when it drops the line. */
  | { type: 'log'; level: LogLevel; message: string; source: LogSource; sent?: boolean; targets?: readonly string[] }
  | { type: 'host'; seq: number; capability: 'llm' | 'billing'; method: string; args: unknown[] };

/** The main thread's answer to a bridged host call, posted on `hostPort`. */
export type HostReply = { seq: number; ok: true; value: unknown } | { seq: number; ok: false; error: string };
