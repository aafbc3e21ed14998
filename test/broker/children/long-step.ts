/**
 * A hostile worker for test/broker/hostile-bridge-steps.test.ts: its task text is JSON
 * `{nameChars, steps, stepChars?, failChars?}`. It sends `steps` status steps, each one node
 * started whose name is `nameChars` characters (`yyy…-<i> started`), then one step of `stepChars`
 * characters if asked, then fails with a message of `failChars` characters if asked, else completes.
 */
import { connectWorker, serveOneTask } from '../../../main/worker/index.js';

interface Plan {
  nameChars: number;
  steps: number;
  stepChars?: number;
  failChars?: number;
}

const { session } = await connectWorker({ name: 'long-step', description: 'long node names and texts', version: '1.0.0', skills: [] });
await serveOneTask(session, async (task, events) => {
  const plan = JSON.parse(task.params.text) as Plan;
  for (let s = 0; s < plan.steps; s++) {
    const suffix = `-${s}`;
    events.status('working', `${'y'.repeat(plan.nameChars - suffix.length)}${suffix} started`);
  }
  if (plan.stepChars !== undefined) events.status('working', 'z'.repeat(plan.stepChars));
  if (plan.failChars !== undefined) return { state: 'failed', message: 'f'.repeat(plan.failChars) };
  events.artifact('done', true);
  return { state: 'completed' };
});
session.close();
