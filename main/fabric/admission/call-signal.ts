import { CallAbort, type AbortLike } from '../../jsonrpc/index.js';

/**
 * How a worker's call learns that it was cancelled (the worker's `req.cancel`, or its connection
 * closing). The hot path (`agent.invoke` between participants) listens on `abort`, a plain
 * `CallAbort`; `signal`, a real `AbortSignal` for what needs one (a timer, a runner's start, the
 * human loop), is made only when first read: Node's `AbortSignal` is an EventTarget that costs
 * ~4 µs of CPU to make and as much again per listener, which every call paid when each had one.
 */
export class CallSignal {
  readonly abort = new CallAbort();
  private real: AbortSignal | undefined;

  /** An `AbortSignal` that aborts with `abort` (with its reason); made on the first read. */
  get signal(): AbortSignal {
    return (this.real ??= toAbortSignal(this.abort));
  }

  /** Aborts the call once, with `reason`. */
  cancel(reason: unknown): void {
    this.abort.abort(reason);
  }
}

/** An `AbortSignal` that aborts when `abort` does, with its reason (`abort` itself if it is one). */
export function toAbortSignal(abort: AbortLike): AbortSignal {
  if (abort instanceof AbortSignal) return abort;
  const controller = new AbortController();
  if (abort.aborted) controller.abort(abort.reason);
  else abort.addEventListener('abort', () => controller.abort(abort.reason), { once: true });
  return controller.signal;
}
