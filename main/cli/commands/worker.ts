import { fstatSync, realpathSync, type Stats } from 'node:fs';
import type { Socket } from 'node:net';
import { AGENT_KINDS, DEFAULT_AGENT_KIND } from '../../agents/kinds.js';
import type { WorkerAgent } from '../../agents/kind.js';
import { openParticipantFd } from '../../worker/participant-fd.js';
import { serveOneTask } from '../../worker/serve-one-task.js';
import { BrokerError, WorkerSession } from '../../worker/worker-session.js';

export interface WorkerOptions {
  participantFd: number;
  agent?: string | undefined;
}

const say = (line: string): void => {
  process.stderr.write(`chatty-gateway worker: ${line}\n`);
};

/**
 * `chatty-gateway worker --participant-fd 3 [--agent <kind>]`: the worker program a `LocalRunner`
 * spawns. Opens the descriptor (one end of the broker's socketpair), says hello with the agent's
 * card, runs one task, sends its one terminal outcome, closes and resolves to 0. A descriptor that
 * is not an open socket, a refused hello, or a connection that ends before a task is one stderr
 * line and exit 1. SIGTERM (the runner stopping it) ends what the agent started, then the process
 * (143). SIGINT is ignored: a Ctrl-C is the broker's to answer (it cancels the task); a worker the
 * gateway spawns runs in a session of its own, out of the terminal's reach, anyway.
 */
export async function runWorker(options: WorkerOptions): Promise<number> {
  const fd = options.participantFd;
  const kind = options.agent ?? DEFAULT_AGENT_KIND;
  const load = AGENT_KINDS[kind];
  if (!load) {
    say(`unknown agent kind '${kind}' (known: ${Object.keys(AGENT_KINDS).join(', ')})`);
    return 1;
  }
  const problem = notASocket(fd);
  if (problem !== undefined) {
    say(`${problem}; this command is started by a broker (a LocalRunner), with its end of a socketpair at fd ${fd}`);
    return 1;
  }

  let agent: WorkerAgent;
  try {
    agent = await load();
  } catch (err) {
    say(`agent '${kind}' could not be loaded: ${messageOf(err)}`);
    return 1;
  }
  process.once('SIGTERM', () => {
    agent.shutdown?.();
    process.exit(143);
  });
  // A Ctrl-C sent to this worker's group (run by hand): the broker that started it decides (it
  // cancels the task, and the agent ends its commands then).
  process.on('SIGINT', () => {});

  let socket: Socket;
  try {
    socket = openParticipantFd(fd);
  } catch (err) {
    say(`fd ${fd} cannot be used as the participant socket: ${messageOf(err)}`);
    return 1;
  }
  let session: WorkerSession;
  let hello: Awaited<ReturnType<typeof WorkerSession.hello>>['hello'];
  try {
    ({ session, hello } = await WorkerSession.hello(socket, agent.card));
  } catch (err) {
    socket.destroy();
    if (err instanceof BrokerError) say(`the broker refused the hello: ${err.message}`);
    else say(`no answer to the hello: ${messageOf(err)}`);
    return 1;
  }

  const workspace = realpathSync(process.cwd());
  const ran = await serveOneTask(session, (task, events) => agent.run({ session, hello, task, events, workspace }));
  const reason = session.reason;
  session.close();
  if (!ran) {
    say(`the connection closed before a task came (${reason ?? 'no reason given'})`);
    return 1;
  }
  return 0;
}

/** Why `fd` cannot be the participant socket, or undefined when it is an open socket. */
function notASocket(fd: number): string | undefined {
  let stat: Stats;
  try {
    stat = fstatSync(fd);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'EBADF' ? `fd ${fd} is not open` : `fd ${fd} cannot be examined (${code ?? messageOf(err)})`;
  }
  if (stat.isSocket()) return undefined;
  const what = stat.isFile() ? 'a file' : stat.isFIFO() ? 'a pipe' : stat.isCharacterDevice() ? 'a character device (a terminal?)' : stat.isDirectory() ? 'a directory' : 'something else';
  return `fd ${fd} is ${what}, not a socket`;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
