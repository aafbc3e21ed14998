/**
 * A hostile worker for test/broker/hostile-memory.test.ts: its task text is a count N; it sends N
 * artifact chunks of one character each as fast as its socket takes them, then waits to be
 * cancelled (and ends its task `canceled` when it is).
 */
import { connectWorker, serveOneTask } from '../../../main/worker/index.js';

const { session } = await connectWorker({ name: 'hostile-chunks', description: 'streams one character at a time', version: '1.0.0', skills: [] });
await serveOneTask(session, async (task, events) => {
  const count = Number(task.params.text);
  for (let i = 0; i < count; i++) {
    events.artifact('a');
    // Let the socket drain now and then: the worker's own memory is not what is measured.
    if (i % 10_000 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  await new Promise((resolve) => task.signal.addEventListener('abort', resolve, { once: true }));
  return { state: 'canceled' };
});
session.close();
