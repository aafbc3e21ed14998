import type { ProgressEvent } from '../fabric/wire/broker-to-worker.js';
import { AbortError } from './abort-error.js';

/** How one call may be withdrawn. */
export interface AbortOptions {
  /** Aborting it withdraws the call: `req.cancel` is sent and the call rejects with an `AbortError`. */
  signal?: AbortSignal;
}

/** How one call is followed and withdrawn. */
export interface CallOptions extends AbortOptions {
  /** Sees each `req.progress` the broker sends for this call, in order, before the call settles. */
  onProgress?: (event: ProgressEvent) => void;
}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (err: Error) => void;
  onProgress: ((event: ProgressEvent) => void) | undefined;
}

/**
 * This worker's calls the broker has not answered, by id: their progress listeners and their
 * withdrawal. A call settles once: by the broker's answer, by its signal (then `cancel(id)` sends
 * the `req.cancel` and the broker's later answer finds nothing here), or by the connection closing.
 */
export class PendingCalls {
  private readonly calls = new Map<number, Pending>();

  constructor(
    private readonly cancel: (id: number) => void,
    private readonly log: (message: string) => void,
  ) {}

  /** Follows call `id`, already taken from the codec and not yet written; `signal` must not be aborted yet. */
  add(id: number, options: CallOptions): Promise<unknown> {
    const { signal, onProgress } = options;
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.calls.delete(id)) return;
        this.cancel(id);
        reject(new AbortError(`aborted: call ${id} was withdrawn`, signal!));
      };
      const detach = (): void => signal?.removeEventListener('abort', onAbort);
      this.calls.set(id, {
        resolve: (result) => (detach(), resolve(result)),
        reject: (err) => (detach(), reject(err)),
        onProgress,
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** A `req.progress` for `id`; a listener that throws is logged, never thrown into the stream. */
  progress(id: number, event: ProgressEvent): void {
    const listener = this.calls.get(id)?.onProgress;
    if (!listener) return;
    try {
      listener(event);
    } catch (err) {
      this.log(`an onProgress listener threw: ${(err as Error)?.message ?? String(err)}`);
    }
  }

  resolve(id: number, result: unknown): void {
    const call = this.calls.get(id);
    this.calls.delete(id);
    call?.resolve(result);
  }

  reject(id: number, err: Error): void {
    const call = this.calls.get(id);
    this.calls.delete(id);
    call?.reject(err);
  }

  rejectAll(err: Error): void {
    const calls = [...this.calls.values()];
    this.calls.clear();
    for (const call of calls) call.reject(err);
  }
}
