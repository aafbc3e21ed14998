/**
 * What a call needs of an `AbortSignal` to learn that its caller gave up. `AbortSignal` itself
 * satisfies it, so an embedder passes one as it is; hot paths pass a `CallAbort`.
 */
export interface AbortLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * An abort controller and its signal in one plain object. Node's `AbortSignal` is an EventTarget:
 * creating one costs ~4 µs of CPU, and as much again for each listener added and removed, which on
 * the `tools/call` path (one per call, one listener) was ~10% of the gateway's own work a
 * request. This is two fields and an array made on the first listener.
 */
export class CallAbort implements AbortLike {
  aborted = false;
  reason: unknown = undefined;
  private listeners: (() => void)[] | undefined;

  /** As on an `AbortSignal`: a listener added after the abort is never called (each is called once: `once` changes nothing). */
  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    if (this.aborted) return;
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners!.splice(at, 1);
  }

  /** Aborts once, with `reason`; each listener is called once, in the order added. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners ?? [];
    this.listeners = undefined;
    for (const listener of listeners) listener();
  }
}
