import type { ParticipantConnection, TaskEventListener } from '../fabric/admission/index.js';
import type { TaskRunParams } from '../fabric/wire/broker-to-worker.js';
import type { TaskOutcome } from '../fabric/wire/payloads.js';
import type { AbortLike } from '../jsonrpc/index.js';

/**
 * Runs one task on a connection; `done` gets its outcome, once, in the turn the task ends (its
 * answer read, the connection closing, the grace timer): no promise turn in between, so a broker
 * answering its caller from `done` writes that answer right behind the task's last event. If
 * `signal` aborts, the task's `task.run` gets a `req.cancel` (as soon as it is out: it may wait for
 * room in a full outbound queue); a worker that has not answered within `graceMs`, or has not even
 * been sent the task by then, ends the task `canceled` here (a task worker is then reaped by its
 * caller; a long-lived participant is left running). `sent` is called once the `task.run` is on its
 * way (never for a task that ended before that). A `task.run` that cannot be encoded throws here,
 * and `done` is never called.
 */
export function runTask(
  connection: ParticipantConnection,
  params: TaskRunParams,
  onEvent: TaskEventListener,
  signal: AbortLike,
  graceMs: number,
  done: (outcome: TaskOutcome) => void | Promise<void>,
  sent?: () => void,
): void {
  const name = connection.node.name;
  let running: number | undefined;
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  // What `done` returns (its caller's answer waiting for room) holds the connection's reading: see `OutcomeListener`.
  const settle = (outcome: TaskOutcome): void | Promise<void> => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    return done(outcome);
  };
  // Installed before the task.run waits for room, so that a full queue cannot hold off the abort.
  const onAbort = (): void => {
    if (running !== undefined) void connection.cancelTask(running);
    timer = setTimeout(() => {
      const message = running !== undefined ? `${name} did not end its task within ${graceMs} ms` : `${name} could not be sent the task within ${graceMs} ms`;
      settle({ state: 'canceled', message: `cancelled: ${message}` });
      // Ended here: the connection keeps nothing of it (a worker may never answer it, and go on streaming into it).
      if (running !== undefined) connection.abandonTask(running);
    }, graceMs);
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  // Most often the task.run is queued at once; else once the outbound queue has room.
  let task: { id: number; queued: Promise<void> | undefined };
  try {
    task = connection.sendTask(params, onEvent, settle);
  } catch (err) {
    // Never sent (its frame could not be encoded): nothing of it is left waiting, and the throw is the caller's.
    settled = true;
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    throw err;
  }
  const queued = (): void => {
    running = task.id;
    // Sent after the abort (or after the task already ended canceled here): withdrawn at once.
    if (signal.aborted) void connection.cancelTask(task.id);
    if (settled) connection.abandonTask(task.id); // after the cancel, which names a task still held
    if (!settled) sent?.();
  };
  if (task.queued) void task.queued.then(queued);
  else queued();
}

