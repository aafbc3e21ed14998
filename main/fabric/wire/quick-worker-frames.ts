import type { WorkerMessage } from './worker-to-broker.js';
import { isJsonObject, keyCount, type JsonObject as Json } from '../../jsonrpc/json-object.js';

/**
 * A hand-written check of the frames every `agent.invoke` brings a broker (the call itself, the
 * callee's `task.event`s and its plain `{state}` result), run before zod on a parsed line. The zod
 * schemas stay the one definition: these accept only frames the schemas accept, give the value
 * they give (same keys, same order, defaults filled), and answer `undefined` for anything else,
 * valid or not — a spawn context, metadata, an unknown key — which then goes to zod as before.
 * test/fabric/quick-frames.test.ts proves it against the schemas over generated and mutated frames.
 * Why: zod's compiled parser and its defaults ran in V8's baseline tier, a third of a call's decoding.
 */

/** `RequestId`: a non-negative safe integer. */
function isRequestId(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

// Parsed JSON has no undefined values and Object.prototype none of the names read here, so
// `value.x === undefined` means the key is absent, and a key count equal to the keys named means
// no other key is there.

function quickTaskEvent(params: unknown): Json | undefined {
  if (!isJsonObject(params) || !isRequestId(params.id)) return undefined;
  const keys = keyCount(params);
  if (params.kind === 'artifact') {
    const { text, lastChunk } = params;
    if (typeof text !== 'string') return undefined;
    if (lastChunk === undefined) return keys === 3 ? { kind: 'artifact', id: params.id, text, lastChunk: false } : undefined;
    return typeof lastChunk === 'boolean' && keys === 4 ? { kind: 'artifact', id: params.id, text, lastChunk } : undefined;
  }
  if (params.kind === 'status') {
    const { state, message } = params;
    if (state !== 'working' && state !== 'submitted') return undefined;
    if (message === undefined) return keys === 3 ? { kind: 'status', id: params.id, state } : undefined;
    return typeof message === 'string' && keys === 4 ? { kind: 'status', id: params.id, state, message } : undefined;
  }
  return undefined;
}

/** `InvokeParams` without a spawn context (one goes to zod). */
function quickInvoke(params: unknown): Json | undefined {
  if (!isJsonObject(params)) return undefined;
  const { agent, prompt, handle, include_trace } = params;
  if (typeof agent !== 'string' || typeof prompt !== 'string') return undefined;
  let keys = 2;
  if (handle !== undefined) {
    if (handle !== null && typeof handle !== 'string') return undefined;
    keys++;
  }
  if (include_trace !== undefined) {
    if (typeof include_trace !== 'boolean') return undefined;
    keys++;
  }
  if (keyCount(params) !== keys) return undefined;
  return { agent, prompt, handle: handle ?? null, include_trace: include_trace ?? false };
}

/** A worker's `task.event` or `agent.invoke` frame as `WorkerMessage` parses it, or `undefined`: ask zod. */
export function quickWorkerMessage(frame: Json): WorkerMessage | undefined {
  const { v, id, method, params } = frame;
  if (v !== 3) return undefined;
  if (method === 'task.event') {
    if (id !== undefined || keyCount(frame) !== 3) return undefined;
    const checked = quickTaskEvent(params);
    return checked && ({ v: 3, method, params: checked } as WorkerMessage);
  }
  if (method === 'agent.invoke') {
    if (!isRequestId(id) || keyCount(frame) !== 4) return undefined;
    const checked = quickInvoke(params);
    return checked && ({ v: 3, id, method, params: checked } as WorkerMessage);
  }
  return undefined;
}

/** A result frame `{v, id, result}` as `ResultEnvelope` parses it, or `undefined`: ask zod. */
export function quickResultEnvelope(frame: Json): { v: 3; id: number; result: unknown } | undefined {
  const { v, id, result } = frame;
  if (v !== 3 || !isRequestId(id) || result === undefined || keyCount(frame) !== 3) return undefined;
  return { v: 3, id, result };
}

/** A `task.run` result with no metadata, as `TaskOutcome` parses it, or `undefined`: ask zod. */
export function quickTaskOutcome(result: unknown): Json | undefined {
  if (!isJsonObject(result)) return undefined;
  const { state, message } = result;
  if (state !== 'completed' && state !== 'failed' && state !== 'canceled') return undefined;
  if (message === undefined) return keyCount(result) === 1 ? { state } : undefined;
  return typeof message === 'string' && keyCount(result) === 2 ? { state, message } : undefined;
}
