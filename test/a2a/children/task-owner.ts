/**
 * A long-lived participant that holds each task it is given: it posts the task's id to the root
 * (so the test learns an id a local participant owns) and works until the task is cancelled.
 */
import { WorkerSession, openParticipantFd, serveOneTask } from '../../../main/worker/index.js';

const socket = openParticipantFd();
const card = { name: 'ignored', description: 'holds its tasks until cancelled', version: '1.0.0', skills: [] };
const { session } = await WorkerSession.hello(socket, card);
while (
  await serveOneTask(session, async (task, events) => {
    events.status('working', 'holding the task');
    await session.postMessage('root', task.params.taskId);
    await new Promise<void>((resolve) => task.signal.addEventListener('abort', () => resolve(), { once: true }));
    return { state: 'canceled', message: 'released' };
  })
);
