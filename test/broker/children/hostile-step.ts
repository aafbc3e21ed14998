/**
 * A hostile worker for test/broker/hostile-bridge-steps.test.ts: its task text is `N` or `N*M`. It
 * sends M status steps (one without `*M`), each naming N fresh nodes as started under it
 * (`x-0: x-1: … x-<N-1> started`, the shape of a scripted agent's relayed callee; the next step
 * goes on from `x-<N>`), then completes.
 */
import { connectWorker, serveOneTask } from '../../../main/worker/index.js';

const { session } = await connectWorker({ name: 'hostile-step', description: 'names many nodes in its steps', version: '1.0.0', skills: [] });
await serveOneTask(session, async (task, events) => {
  const [names, steps = 1] = task.params.text.split('*').map(Number) as [number, number?];
  for (let s = 0; s < steps; s++) {
    events.status('working', `${Array.from({ length: names }, (_, i) => `x-${s * names + i}`).join(': ')} started`);
  }
  events.artifact('done', true);
  return { state: 'completed' };
});
session.close();
