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
  private readonly calls = new Map<string, CallAbort>();

  begin(peer: string | undefined, id: RequestId): InflightCall {
    const key = keyOf(peer, id);
    const signal = new CallAbort();
    this.calls.set(key, signal);
    return {
      signal,
      end: () => {
        if (this.calls.get(key) === signal) this.calls.delete(key);
      },
    };
  }

  has(peer: string | undefined, id: RequestId): boolean {
    return this.calls.has(keyOf(peer, id));
  }

  /** Cancels the call `id` of `peer` because of `why`; false when no such call is running (answered already, or never seen). */
  cancel(peer: string | undefined, id: RequestId, why: string): boolean {
    const signal = this.calls.get(keyOf(peer, id));
    if (!signal) return false;
    signal.abort(new CallCancelled(why));
    return true;
  }

  /** Cancels every running call of `peer` (its stream closed). */
  cancelPeer(peer: string, why: string): void {
    const prefix = `${peer}\n`;
    for (const [key, signal] of this.calls) if (key.startsWith(prefix)) signal.abort(new CallCancelled(why));
  }

  get size(): number {
    return this.calls.size;
  }
}

/** `1` and `"1"` are different ids. */
function keyOf(peer: string | undefined, id: RequestId): string {
  return `${peer ?? ''}\n${typeof id}:${String(id)}`;
}
