import type { TaskOutcome } from '../fabric/wire/payloads.js';
import type { WorkerSession, WorkerTask } from './worker-session.js';

/** What a task's runner may do while it runs. */
export interface TaskEvents {
  status(state: 'submitted' | 'working', message?: string): void;
  artifact(text: string, lastChunk?: boolean): void;
}

export type TaskRunner = (task: WorkerTask, events: TaskEvents) => Promise<TaskOutcome>;

/** The `task.event` frames of task `taskId`, one frame per call (a worker running several tasks at once uses this directly). */
export function taskEvents(session: WorkerSession, taskId: number): TaskEvents {
  return {
    status: (state, message) =>
      session.event(message === undefined ? { kind: 'status', id: taskId, state } : { kind: 'status', id: taskId, state, message }),
    artifact: (text, lastChunk = false) => session.event({ kind: 'artifact', id: taskId, text, lastChunk }),
  };
}

/**
 * The one-shot worker loop: take one task, run it, send its one terminal outcome. A runner that
 * throws ends the task `failed` with its message. Returns false when the connection closed first.
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
  session.finish(task.id, outcome);
  return true;
}
