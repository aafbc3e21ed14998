/**
 * A loaded module's handle (`module-handle.ts`) and its parts: its lock (`call-queue.ts`), its
 * clock (`deadline.ts`), its idle clock (`idle-timer.ts`) and its worker thread, the engine
 * (`guest-worker.ts`), started on the first call and stopped when idle (`engine-starter.ts`: one
 * start at a time, each in its process-wide turn of `engine-starts.ts`, and the wait after starts
 * that failed); the main thread's short wait for a lone call's answer (`answer-spin.ts`); and the waiting argument bytes it shares with the other modules of its registry
 * (`waiting-budget.ts`).
 */
export { ModuleHandle, type InvokeRequest, type InvokeOptions, type HandleStats, type ModuleHandleInit, type ToolRecordStore } from './module-handle.js';
export { StartWaitError } from './start-wait.js';
export { DEFAULT_ENGINE_IDLE_MS, checkedEngineIdleMs } from './idle-timer.js';
export { ANSWER_SPIN_MS, checkedAnswerSpinMs } from './answer-spin.js';
export { DEFAULT_TOTAL_WAITING_ARGUMENT_BYTES, WaitingBudget } from './waiting-budget.js';
