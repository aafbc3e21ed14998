import type { ParticipantConnection, TaskEventListener } from '../fabric/admission/index.js';
import type { TaskRunParams } from '../fabric/wire/broker-to-worker.js';
import type { TaskOutcome } from '../fabric/wire/payloads.js';
import type { AbortLike } from '../jsonrpc/index.js';

/**
 * Runs one task on a connection; `done` gets its outcome, once, in the turn the task ends (its
 * answer read, the connection closing, the grace timer): no promise turn in between, so a broker
 * answering its caller from `done` writes that answer right behind the task's last event. If
 * `signal` aborts while the `task.run` still waits for room in the worker's full outbound queue (a
 * worker that stopped reading), it is withdrawn, never sent, and the task ends `canceled` at once
 * (`cancelled before <name> was sent the task`); one aborted before this is called ends so too,
 * nothing sent. Once the `task.run` is out, it gets a `req.cancel`, and a worker that has not
 * answered within `graceMs` ends the task `canceled` here (a task worker is then reaped by its
 * caller; a long-lived participant is left running). `sent` is called once the `task.run` is on its
 * way (never for a task that ended before that). A `task.run` that cannot be sent throws here
 * (one that cannot be encoded, one over the worker's frame cap, one refused because another
 * already waits for the worker's room: see `ParticipantConnection.sendTask`), and `done` is never
 * called.
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
  const notSent: TaskOutcome = { state: 'canceled', message: `cancelled before ${name} was sent the task` };
  if (signal.aborted) {
    // Nothing to cancel on the worker's side: it never hears of the task.
    void done(notSent);
    return;
  }
  let running: number | undefined;
  let settled = false;
  /** Taken back while it waited for room: it is never sent, so nothing is cancelled or abandoned. */
  let withdrawn = false;
  let timer: NodeJS.Timeout | undefined;
  let task: { id: number; queued: Promise<void> | undefined } | undefined;
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
    // Still waiting for room: taken back, never written (a worker that stopped reading would hold it for ever).
    if (running === undefined && task !== undefined && connection.withdrawTask(task.id, signal)) {
      withdrawn = true;
      settle(notSent);
      return;
    }
    if (running !== undefined) void connection.cancelTask(running);
    timer = setTimeout(() => {
      const message = running !== undefined ? `${name} did not end its task within ${graceMs} ms` : `${name} could not be sent the task within ${graceMs} ms`;
      settle({ state: 'canceled', message: `cancelled: ${message}` });
      // Ended here: the connection keeps nothing of it (a worker may never answer it, and go on streaming into it).
      if (running !== undefined) connection.abandonTask(running);
    }, graceMs);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  // Most often the task.run is queued at once; else once the outbound queue has room.
  try {
    task = connection.sendTask(params, onEvent, settle, signal);
  } catch (err) {
    // Never sent (see above): nothing of it is left waiting, and the throw is the caller's.
    settled = true;
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    throw err;
  }
  const { id } = task;
  const queued = (): void => {
    if (withdrawn) return; // its `queued` resolves when it is withdrawn too
    running = id;
    // Sent after the abort (or after the task already ended canceled here): withdrawn at once.
    if (signal.aborted) void connection.cancelTask(id);
    if (settled) connection.abandonTask(id); // after the cancel, which names a task still held
    if (!settled) sent?.();
  };
  if (task.queued) void task.queued.then(queued);
  else queued();
}
