import type { ModuleHandle } from '../../main/plugins/index.js';

/**
 * Resolves once the guest is running the call with this call-id (polled each turn of the event
 * loop, no timer). It throws if the call (its promise, always given) ended before it was seen
 * running: a main thread descheduled for the whole of a short call (a loaded machine) would
 * otherwise poll for ever, as busy.test.ts once did for 25 minutes at load 20, and so would a
 * call that failed before it ran (an engine that did not start) when its promise was left out.
 */
export async function running(handle: ModuleHandle, callId: string, call: Promise<unknown>): Promise<void> {
  let ended = false;
  call.then(
    () => (ended = true),
    () => (ended = true),
  );
  while (handle.runningCallId !== callId) {
    if (ended) throw new Error(`the call ${callId} ended before it was seen running: give it a longer run`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
