import type { ModuleHandle } from '../../main/plugins/index.js';

/** Resolves once the guest is running the call with this call-id (polled each turn of the event loop, no timer). */
export async function running(handle: ModuleHandle, callId: string): Promise<void> {
  while (handle.runningCallId !== callId) await new Promise((resolve) => setImmediate(resolve));
}
