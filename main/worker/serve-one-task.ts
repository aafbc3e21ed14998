import type { TaskOutcome } from '../fabric/wire/payloads.js';
import type { TaskEventParams } from '../fabric/wire/worker-to-broker.js';
import type { WorkerSession, WorkerTask } from './worker-session.js';

/** What a task's runner may do while it runs. */
export interface TaskEvents {
  status(state: 'submitted' | 'working', message?: string): void;
  artifact(text: string, lastChunk?: boolean): void;
}

export type TaskRunner = (task: WorkerTask, events: TaskEvents) => Promise<TaskOutcome>;

/**
 * The one-shot worker loop: take one task, run it, send its one terminal outcome. A runner that
 * throws ends the task `failed` with its message. Returns false when the connection closed first.
 */
export async function serveOneTask(session: WorkerSession, run: TaskRunner): Promise<boolean> {
  const task = await session.nextTask();
  if (!task) return false;
  const send = (params: TaskEventParams) => session.event(params);
  const events: TaskEvents = {
    status: (state, message) => send(message === undefined ? { kind: 'status', id: task.id, state } : { kind: 'status', id: task.id, state, message }),
    artifact: (text, lastChunk = false) => send({ kind: 'artifact', id: task.id, text, lastChunk }),
  };
  let outcome: TaskOutcome;
  try {
    outcome = await run(task, events);
  } catch (err) {
    outcome = { state: 'failed', message: (err as Error).message ?? String(err) };
  }
  session.finish(task.id, outcome);
  return true;
}
