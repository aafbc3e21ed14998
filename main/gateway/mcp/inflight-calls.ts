import type { RequestId } from '../../jsonrpc/index.js';

/** Why a call was given up: the abort reason its module sees, and the text the edge log shows. */
export class CallCancelled extends Error {
  override readonly name = 'CallCancelled';
}

/** The HTTP client closed its connection before the answer was written. */
export const CLIENT_WENT_AWAY = 'the client went away';

/** One call in flight: the signal to hand the module, and `end()` once it is answered. */
export interface InflightCall {
  readonly signal: AbortSignal;
  end(): void;
}

/**
 * The `tools/call`s of one module that are running, by who asked (the transport's peer: an SSE
 * session, an `Mcp-Session-Id`) and their JSON-RPC id, so that `notifications/cancelled` can
 * stop the right one: ids are unique per client only. A call's signal also aborts when its
 * transport's does (the HTTP client went away).
 */
export class InflightCalls {
  private readonly calls = new Map<string, AbortController>();

  begin(peer: string | undefined, id: RequestId, transport: AbortSignal): InflightCall {
    const key = keyOf(peer, id);
    const controller = new AbortController();
    const onGone = (): void => controller.abort(new CallCancelled(messageOf(transport.reason, CLIENT_WENT_AWAY)));
    if (transport.aborted) onGone();
    else transport.addEventListener('abort', onGone, { once: true });
    this.calls.set(key, controller);
    return {
      signal: controller.signal,
      end: () => {
        transport.removeEventListener('abort', onGone);
        if (this.calls.get(key) === controller) this.calls.delete(key);
      },
    };
  }

  /** Cancels the call `id` of `peer`; false when no such call is running (already answered, or never seen). */
  cancel(peer: string | undefined, id: RequestId, reason: string | undefined): boolean {
    const controller = this.calls.get(keyOf(peer, id));
    if (!controller) return false;
    controller.abort(new CallCancelled(`notifications/cancelled${reason ? ` (${reason})` : ''}`));
    return true;
  }

  has(peer: string | undefined, id: RequestId): boolean {
    return this.calls.has(keyOf(peer, id));
  }

  get size(): number {
    return this.calls.size;
  }
}

/** `1` and `"1"` are different ids. */
function keyOf(peer: string | undefined, id: RequestId): string {
  return `${peer ?? ''}\n${typeof id}:${String(id)}`;
}

function messageOf(reason: unknown, fallback: string): string {
  return reason instanceof Error && reason.name !== 'AbortError' ? reason.message : typeof reason === 'string' ? reason : fallback;
}
