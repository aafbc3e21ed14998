import { CallAbort, type RequestId } from '../../jsonrpc/index.js';

/** Why a call was given up: the abort reason its module sees, and the text the edge log shows. */
export class CallCancelled extends Error {
  override readonly name = 'CallCancelled';
}

/** The HTTP client closed its connection before the answer was written. */
export const CLIENT_WENT_AWAY = 'the client went away';
/** The legacy SSE stream a call was posted on closed. */
export const STREAM_CLOSED = 'the client went away (its SSE stream closed)';

/** One call in flight: the signal to hand the module, and `end()` once it is answered. */
export interface InflightCall {
  readonly signal: CallAbort;
  end(): void;
}

/**
 * The `tools/call`s of one module that are running, by who asked (the transport's peer: an SSE
 * session, an `Mcp-Session-Id`) and their JSON-RPC id, so that `notifications/cancelled` and a
 * client going away stop the right ones: ids are unique per client only. Each call's signal is a
 * `CallAbort`, which costs next to nothing when nobody cancels.
 */
export class InflightCalls {
  /** One signal, or several when a client runs two calls under one id (a client bug, which must not let one outlive a cancellation). */
  private readonly calls = new Map<string, CallAbort | CallAbort[]>();

  begin(peer: string | undefined, id: RequestId): InflightCall {
    const key = keyOf(peer, id);
    const signal = new CallAbort();
    const running = this.calls.get(key);
    if (running === undefined) this.calls.set(key, signal);
    else if (Array.isArray(running)) running.push(signal);
    else this.calls.set(key, [running, signal]);
    return { signal, end: () => this.end(key, signal) };
  }

  has(peer: string | undefined, id: RequestId): boolean {
    return this.calls.has(keyOf(peer, id));
  }

  /** Cancels every call `id` of `peer` because of `why`; false when no such call is running (answered already, or never seen). */
  cancel(peer: string | undefined, id: RequestId, why: string): boolean {
    const running = this.calls.get(keyOf(peer, id));
    if (!running) return false;
    abortAll(running, why);
    return true;
  }

  /** Cancels every running call of `peer` (its stream closed). */
  cancelPeer(peer: string, why: string): void {
    const prefix = `${peer}\n`;
    for (const [key, running] of this.calls) if (key.startsWith(prefix)) abortAll(running, why);
  }

  /** Keys with a call running. */
  get size(): number {
    return this.calls.size;
  }

  private end(key: string, signal: CallAbort): void {
    const running = this.calls.get(key);
    if (running === signal) {
      this.calls.delete(key);
      return;
    }
    if (!Array.isArray(running)) return;
    const at = running.indexOf(signal);
    if (at >= 0) running.splice(at, 1);
    if (running.length === 1) this.calls.set(key, running[0]!);
  }
}

function abortAll(running: CallAbort | CallAbort[], why: string): void {
  if (!Array.isArray(running)) return running.abort(new CallCancelled(why));
  for (const signal of running) signal.abort(new CallCancelled(why));
}

/** `1` and `"1"` are different ids. */
function keyOf(peer: string | undefined, id: RequestId): string {
  return `${peer ?? ''}\n${typeof id}:${String(id)}`;
}
