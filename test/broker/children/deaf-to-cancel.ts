/**
 * A hostile long-lived participant for test/broker/hostile-abandoned-task.test.ts: it sends each
 * task 1 MiB of text (16 chunks of 64 KiB), then never answers it, cancelled or not, and after a
 * req.cancel it sends another 1 MiB into the task, as if still running it.
 */
import { connectWorker } from '../../../main/worker/index.js';

const { session } = await connectWorker({ name: 'deaf-to-cancel', description: 'never ends a task', version: '1.0.0', skills: [] });
const chunk = 'y'.repeat(64 * 1024);
const stream = (id: number): void => {
  for (let i = 0; i < 16; i++) session.event({ id, kind: 'artifact', text: chunk });
};
for (;;) {
  const task = await session.nextTask();
  if (!task) break;
  stream(task.id);
  task.signal.addEventListener('abort', () => stream(task.id), { once: true });
}
