/**
 * A signal that aborts `graceMs` after `stopping` aborts (or `graceMs` from now when it has
 * already), with the same reason; `dispose` lets go of the timer and the listener. For what may
 * finish its work once its owner begins to stop, but not wait for ever: a workspace's release
 * whose git a worker made block (a fifo among git's records) while the broker stops.
 */
export function graceAfter(stopping: AbortSignal | undefined, graceMs: number): { signal: AbortSignal | undefined; dispose(): void } {
  if (stopping === undefined) return { signal: undefined, dispose: () => {} };
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    timer = setTimeout(() => controller.abort(stopping.reason), graceMs);
  };
  if (stopping.aborted) arm();
  else stopping.addEventListener('abort', arm, { once: true });
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      stopping.removeEventListener('abort', arm);
    },
  };
}
