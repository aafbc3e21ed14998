/**
 * A loaded module's handle (`module-handle.ts`) and its parts: its lock (`call-queue.ts`), its
 * clock (`deadline.ts`), its idle clock (`idle-timer.ts`) and its worker thread, the engine
 * (`guest-worker.ts`), started on the first call and stopped when idle; and the waiting argument
 * bytes it shares with the other modules of its registry (`waiting-budget.ts`).
 */
export { ModuleHandle, type InvokeRequest, type InvokeOptions, type HandleStats, type ModuleHandleInit, type ToolRecordStore } from './module-handle.js';
export { StartWaitError } from './start-wait.js';
export { DEFAULT_ENGINE_IDLE_MS, checkedEngineIdleMs } from './idle-timer.js';
export { DEFAULT_TOTAL_WAITING_ARGUMENT_BYTES, WaitingBudget } from './waiting-budget.js';
