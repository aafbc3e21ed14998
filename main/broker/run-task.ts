import type { ParticipantConnection, RunningTask, TaskEventListener } from '../fabric/admission/index.js';
import type { TaskRunParams } from '../fabric/wire/broker-to-worker.js';
import type { TaskOutcome } from '../fabric/wire/payloads.js';
import type { AbortLike } from '../jsonrpc/index.js';

/**
 * Runs one task on a connection; resolves its outcome. If `signal` aborts, the task's `task.run`
 * gets a `req.cancel` (as soon as it is out: it may wait for room in a full outbound queue); a
 * worker that has not answered within `graceMs`, or has not even been sent the task by then, ends
 * the task `canceled` here (a task worker is then reaped by its caller; a long-lived participant
 * is left running). `sent` is called once the `task.run` is on its way.
 */
export function runTask(
  connection: ParticipantConnection,
  params: TaskRunParams,
  onEvent: TaskEventListener,
  signal: AbortLike,
  graceMs: number,
  sent?: () => void,
): Promise<TaskOutcome> {
  return new Promise<TaskOutcome>((resolve) => {
    const name = connection.node.name;
    let running: RunningTask | undefined;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (outcome: TaskOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    // Installed before the task.run waits for room, so that a full queue cannot hold off the abort.
    const onAbort = (): void => {
      if (running) void connection.cancelTask(running.id);
      timer = setTimeout(() => {
        const message = running ? `${name} did not end its task within ${graceMs} ms` : `${name} could not be sent the task within ${graceMs} ms`;
        settle({ state: 'canceled', message: `cancelled: ${message}` });
      }, graceMs);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    const queued = (task: RunningTask): void => {
      running = task;
      // Sent after the abort (or after the task already ended canceled here): withdrawn at once.
      if (signal.aborted) void connection.cancelTask(task.id);
      if (settled) return;
      sent?.();
      void task.outcome.then(settle);
    };
    // Most often the task.run is queued at once; else once the outbound queue has room.
    const task = connection.startTask(params, onEvent);
    if (task.queued) void task.queued.then(() => queued(task));
    else queued(task);
  });
}
