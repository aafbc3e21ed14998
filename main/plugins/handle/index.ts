/**
 * A loaded module's handle (`module-handle.ts`) and its three parts: its lock (`call-queue.ts`),
 * its clock (`deadline.ts`) and its worker thread (`guest-worker.ts`).
 */
export { ModuleHandle, type InvokeRequest, type InvokeOptions, type HandleStats, type ModuleHandleInit } from './module-handle.js';
