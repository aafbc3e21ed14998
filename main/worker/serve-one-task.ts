import type { TaskEventParams } from '../fabric/wire/worker-to-broker.js';
import { TaskOutcome } from '../fabric/wire/payloads.js';
import { checkOutgoing } from './outgoing-check.js';
import type { WorkerSession, WorkerTask } from './worker-session.js';

/** What a task's runner may do while it runs. */
export interface TaskEvents {
  status(state: 'submitted' | 'working', message?: string): void;
  artifact(text: string, lastChunk?: boolean): void;
}

export type TaskRunner = (task: WorkerTask, events: TaskEvents) => Promise<TaskOutcome>;

/**
 * The `task.event` frames of task `taskId`, one frame per call (a worker running several tasks at
 * once uses this directly). An argument the wire does not take (`status('thinking')`) throws a
 * `RangeError` or `TypeError` here, naming it, and sends nothing.
 */
export function taskEvents(session: WorkerSession, taskId: number): TaskEvents {
  const send = (params: TaskEventParams, call: string): void => session.event(params, call);
  return {
    status: (state, message) =>
      send(message === undefined ? { kind: 'status', id: taskId, state } : { kind: 'status', id: taskId, state, message }, 'events.status'),
    artifact: (text, lastChunk = false) => send({ kind: 'artifact', id: taskId, text, lastChunk }, 'events.artifact'),
  };
}

/**
 * The one-shot worker loop: take one task, run it, send its one terminal outcome. A runner that
 * throws ends the task `failed` with its message, as does one that returns an outcome the wire
 * does not take (`{state: 'done'}`: the message says what is wrong with it). Returns false when
 * the connection closed first.
 */
export async function serveOneTask(session: WorkerSession, run: TaskRunner): Promise<boolean> {
  const task = await session.nextTask();
  if (!task) return false;
  let outcome: TaskOutcome;
  try {
    outcome = await run(task, taskEvents(session, task.id));
  } catch (err) {
    outcome = { state: 'failed', message: (err as Error)?.message ?? String(err) };
  }
  try {
    checkOutgoing(TaskOutcome, outcome, "the task runner's outcome");
  } catch (err) {
    outcome = { state: 'failed', message: (err as Error).message };
  }
  session.finish(task.id, outcome);
  return true;
}
