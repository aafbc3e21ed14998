/**
 * A task worker that asks its question only when the test says so: it connects to the unix socket
 * CHATTY_TEST_READY, and once the test writes there it asks one question, posts to the root what
 * came back (`<name>: answered …` or `<name>: error …`) and ends its task.
 */
import { connect } from 'node:net';
import { BrokerError, WorkerSession, openParticipantFd } from '../../../main/worker/index.js';

const socket = openParticipantFd();
const { session, hello } = await WorkerSession.hello(socket, { name: 'ask-later', description: 'asks when told', version: '1.0.0', skills: [] });
const task = await session.nextTask();
if (task) {
  const ready = connect(process.env['CHATTY_TEST_READY']!);
  await new Promise((resolve) => ready.once('data', resolve));
  ready.destroy();
  let out: string;
  try {
    out = `answered ${JSON.stringify(await session.ask([{ id: 'q1', question: 'Which?', options: ['a', 'b'] }]))}`;
  } catch (err) {
    out = `error ${err instanceof BrokerError ? err.error.message : String(err)}`;
  }
  await session.postMessage('root', `${hello.name}: ${out}`);
  session.finish(task.id, { state: 'completed' });
}
session.close();
