/**
 * A well-behaved worker built on main/worker: opens fd 3, says hello (with a card name the broker
 * must ignore), runs one task and exits. Its mode (argv[2]):
 *   echo   – status, one artifact echoing the text, then `completed` naming who it was told it is
 *   hang   – takes the task and never answers (the test ends it)
 *   crash  – writes to stderr and exits before saying hello
 *   silent – opens the socket and never says hello
 * A hello the broker refuses is reported on stderr (`hello refused: <kind>: <message>`), exit 2.
 */
import { BrokerError, WorkerSession, openParticipantFd, serveOneTask } from '../../../main/worker/index.js';

const mode = process.argv[2] ?? 'echo';

if (mode === 'crash') {
  process.stderr.write('echo-worker: starting\n'.repeat(600)); // more than the 8 KiB the broker keeps
  process.stderr.write('echo-worker: fatal: no model configured\n');
  process.exit(3);
}

const socket = openParticipantFd();
if (mode !== 'silent') {
  const card = { name: 'i-pick-my-own-name', description: 'echoes its task', version: '1.0.0', skills: [] };
  const said = await WorkerSession.hello(socket, card).catch((err: Error) => {
    const what = err instanceof BrokerError ? `${err.error.kind}: ${err.error.message}` : `not answered: ${err.message}`;
    process.stderr.write(`echo-worker: hello refused: ${what}\n`);
    process.exit(2);
  });
  const { session, hello } = said;
  await serveOneTask(session, async (task, events) => {
    if (mode === 'hang') {
      events.status('working', 'waiting forever');
      await new Promise(() => {});
    }
    events.status('working', 'echoing');
    events.artifact(task.params.text, true);
    return { state: 'completed', message: `${hello.name} in ${hello.scope}: ${task.params.text}` };
  });
  session.close();
}
