import { availableParallelism } from 'node:os';

/**
 * Engines starting at once, process-wide. A start is CPU work (compiling the core modules,
 * instantiating the component): ten plugins woken together on a 2-core machine would each take
 * ten times as long, long enough to run into the instantiation limit, and their compilers' scratch
 * memory would all be live at once (the C allocator keeps that high-water mark after they end).
 * So starts beyond the limit wait their turn; a waiting start has not begun its clock.
 */
export const ENGINE_START_LIMIT = Math.max(2, Math.min(4, availableParallelism()));

let running = 0;
const waiting: (() => void)[] = [];

/** Engine starts under way now (for tests and logs); never above `ENGINE_START_LIMIT`. */
export function enginesStarting(): number {
  return running;
}

/**
 * Runs `start` when fewer than the limit of engine starts are under way. A start abandoned while
 * it waits its turn (`signal`: its handle closed, or no call wants it any more) leaves the queue
 * at once and rejects with the signal's reason, never holding up those behind it.
 */
export async function inStartTurn<T>(start: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  signal?.throwIfAborted();
  if (running >= ENGINE_START_LIMIT) await waitForTurn(signal);
  else running++;
  try {
    return await start();
  } finally {
    const next = waiting.shift();
    if (next) next(); // the turn passes on without `running` changing
    else running--;
  }
}

function waitForTurn(signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const turn = (): void => {
      signal?.removeEventListener('abort', abandon);
      resolve();
    };
    const abandon = (): void => {
      const at = waiting.indexOf(turn);
      if (at >= 0) waiting.splice(at, 1);
      reject(signal!.reason);
    };
    waiting.push(turn);
    signal?.addEventListener('abort', abandon, { once: true });
  });
}
