import type { Card, HelloResult, TaskOutcome } from '../worker/wire-types.js';
import type { TaskEvents } from '../worker/serve-one-task.js';
import type { WorkerSession, WorkerTask } from '../worker/worker-session.js';

/** What an agent kind gets for its one task. */
export interface AgentTask {
  session: WorkerSession;
  /** Who the broker says this worker is (its admitted name). */
  hello: HelloResult;
  task: WorkerTask;
  events: TaskEvents;
  /** The worker's workspace: its working directory, real path. */
  workspace: string;
}

/**
 * An agent `chatty-gateway worker --agent <kind>` can run: the card it says hello with and how it
 * runs one task. `shutdown` is called when the worker is told to stop (SIGTERM): end what it started.
 */
export interface WorkerAgent {
  card: Card;
  run(task: AgentTask): Promise<TaskOutcome>;
  shutdown?(): void;
}
