import { z } from 'zod';
import { isNotification, type RequestId, type TransportFrame } from '../../jsonrpc/index.js';

/**
 * The client's single requests whose POST is still open, by id, so that a `notifications/cancelled`
 * naming one can also drop its POST. Lines go on separate connections, so the gateway may read a
 * cancellation before the call it names has begun (a big call, a cancellation right behind it):
 * the gateway then finds nothing to cancel and the call would run to its end. Dropping the call's
 * POST closes that gap: a call not read yet never runs, and a running one is cancelled by the
 * gateway as its connection closes.
 */
export class RunningCalls {
  private readonly calls = new Map<string, Set<AbortController>>();

  /** A request whose POST is starting: its signal drops the POST; `end()` once it is answered. */
  begin(id: RequestId): { readonly signal: AbortSignal; end(): void } {
    const key = keyOf(id);
    const controller = new AbortController();
    const same = this.calls.get(key) ?? new Set();
    same.add(controller);
    this.calls.set(key, same);
    return {
      signal: controller.signal,
      end: () => {
        same.delete(controller);
        if (same.size === 0 && this.calls.get(key) === same) this.calls.delete(key);
      },
    };
  }

  /** Drops the POST of every request `id` still open (a client that reused an id in flight cancels both). */
  cancel(id: RequestId, reason: string): void {
    for (const controller of this.calls.get(keyOf(id)) ?? []) controller.abort(reason);
  }
}

/** What the bridge reads of a `notifications/cancelled`: the request it names and why (other members left unread, not copied). */
const CancelledSchema = z.object({
  method: z.literal('notifications/cancelled'),
  params: z.object({ requestId: z.union([z.string(), z.number()]), reason: z.string().optional() }),
});

/** The id and the words of a line that is one `notifications/cancelled` naming a request. */
export function cancellationOf(frame: TransportFrame): { readonly id: RequestId; readonly reason: string } | undefined {
  if (frame.kind !== 'message' || !isNotification(frame.message)) return undefined;
  const parsed = CancelledSchema.safeParse(frame.message);
  if (!parsed.success) return undefined;
  const { requestId, reason } = parsed.data.params;
  return { id: requestId, reason: `notifications/cancelled${reason !== undefined ? ` (${reason})` : ''}` };
}

/** Whether two ids name the same request: `1` and `"1"` do not. */
export function sameId(a: RequestId, b: RequestId): boolean {
  return keyOf(a) === keyOf(b);
}

/** `1` and `"1"` are different ids, as the gateway keeps them. */
function keyOf(id: RequestId): string {
  return `${typeof id}:${String(id)}`;
}
