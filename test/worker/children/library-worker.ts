/**
 * A worker written against the library (`main/worker`, published as
 * `chatty-protocol-gateway/worker`). It says hello, runs one task and exits. argv[2]:
 *   scenario – the task is a step, two text deltas and a result, through TaskMapper (the same
 *              frames as children/raw-worker.ts writes by hand)
 *   calls    – the task's text names what to do with the broker (see `act`); the outcome's message
 *              is a JSON report of what the worker saw
 */
import { AbortError, BrokerError, TaskMapper, connectWorker, serveOneTask, type ProgressEvent, type TaskEvents, type WorkerSession } from '../../../main/worker/index.js';
import { CARD } from './card.js';

const mode = process.argv[2] ?? 'scenario';
const { session } = await connectWorker(CARD);

/** How a call failed, as the test reads it. */
function failure(err: unknown): Record<string, unknown> {
  if (err instanceof BrokerError) return { rejected: 'BrokerError', error: err.error };
  if (err instanceof AbortError) return { rejected: 'AbortError', name: err.name, code: err.code, message: err.message };
  return { rejected: 'Error', message: (err as Error).message };
}

/** Aborts `controller` on the first progress event that says the callee was admitted. */
function abortOnAdmitted(controller: AbortController, log: ProgressEvent[]) {
  return (event: ProgressEvent) => {
    log.push(event);
    if ('Admitted' in event) controller.abort();
  };
}

/** What a call with a bad argument did: threw (sync) or rejected, and with what. */
async function misuse(run: () => unknown): Promise<Record<string, unknown>> {
  try {
    await run();
    return { sent: true };
  } catch (err) {
    return { threw: (err as Error).constructor.name, message: (err as Error).message };
  }
}

async function act(what: string, session: WorkerSession, events: TaskEvents): Promise<unknown> {
  switch (what) {
    case 'misuse': {
      // A plain-JS caller's slips: each throws where it is made; nothing reaches the wire.
      const loose = events as unknown as Record<string, (...args: unknown[]) => void>;
      const calls = session as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      let sync = true;
      const syncThrow = await misuse(() => {
        try {
          loose['status']!('thinking');
        } finally {
          sync = false;
        }
      });
      const seen = {
        status: { ...syncThrow, sync: !sync },
        artifact: await misuse(() => loose['artifact']!(42)),
        approve: await misuse(() => calls['approve']!('run', 'npm test')),
        ask: await misuse(() => calls['ask']!([{ id: 'q1', question: 'why?', hint: 'x' }])),
        invoke: await misuse(() => calls['invokeAgent']!('helper', undefined)),
        finish: await misuse(() => session.finish(-1, { state: 'completed' })),
      };
      // The connection is still there.
      return { seen, after: (await session.listAgents()).map((agent) => agent.name) };
    }
    case 'invoke': {
      const log: unknown[] = [];
      const result = await session.invokeAgent('helper', 'summarise foo.rs', {
        spawnContext: { workspace_root: '/tmp/ws', roster: ['helper'] },
        onProgress: (event) => log.push({ progress: event }),
      });
      // RawJson is reported as its text: the broker's bytes, verbatim.
      log.push({ result: { ...result, metadata: { ...result.metadata, conversation: result.metadata?.conversation?.text } } });
      return log;
    }
    case 'invoke-unknown':
      return session.invokeAgent('nobody', 'hello?').then((result) => ({ resolved: result }), failure);
    case 'invoke-abort': {
      const controller = new AbortController();
      const progress: ProgressEvent[] = [];
      const outcome = await session
        .invokeAgent('helper', 'run forever', { signal: controller.signal, onProgress: abortOnAdmitted(controller, progress) })
        .then((result) => ({ resolved: result }), failure);
      // The session goes on: the broker's answer to the withdrawn call settles nothing here.
      const after = await session.listAgents();
      return { progress, outcome, after: after.map((agent) => agent.name) };
    }
    case 'invoke-pre-aborted': {
      const controller = new AbortController();
      controller.abort();
      const outcome = await session.invokeAgent('helper', 'never sent', { signal: controller.signal }).then((result) => ({ resolved: result }), failure);
      const after = await session.listAgents();
      return { outcome, after: after.map((agent) => agent.name) };
    }
    case 'list':
      return session.listAgents();
    case 'post':
      return [await session.postMessage('root', 'build is green'), await session.postMessage('stranger', 'hi')];
    case 'approve':
      return [await session.approve('exec', 'npm test'), await session.approve('write', 'src/a.ts', '+3 -1')];
    case 'approve-abort': {
      const controller = new AbortController();
      const asked = session.approve('exec', 'rm -rf build', undefined, { signal: controller.signal });
      controller.abort();
      return asked.then((verdict) => ({ resolved: verdict }), failure);
    }
    case 'ask':
      return [
        await session.ask([
          { id: 'q1', question: 'Which database?', options: ['pg', 'sqlite'] },
          { id: 'q2', question: 'Name the service' },
        ]),
        await session.ask([{ id: 'q3', question: 'Ship it?', options: ['yes', 'no'] }], { origin: 'peer-7' }),
      ];
    case 'ask-abort': {
      const controller = new AbortController();
      const asked = session.ask([{ id: 'q1', question: 'Which database?' }], { signal: controller.signal });
      controller.abort();
      return asked.then((answers) => ({ resolved: answers }), failure);
    }
    case 'relay': {
      // Questions relayed from the callee: answered, escalated, withdrawn, thrown, or a reply that does not fit the wire.
      const withdrawn: string[] = [];
      session.onQuestion(async (request, signal) => {
        // `request.question` is the broker's id for the relayed copy; what is asked is in `request.request`.
        const question = request.request.questions.map((q) => q.question).join(' / ');
        if (question.includes('escalate')) return 'escalate';
        if (question.includes('withdraw')) {
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          withdrawn.push((signal.reason as Error).message);
          throw signal.reason;
        }
        if (question.includes('throw')) throw new Error('cannot decide');
        if (question.includes('misfit')) return [{ id: 7 }] as never;
        return request.request.questions.map((q) => ({ id: q.id, answer: `${request.request.asker.agent} asked ${q.question}; ${q.options[0] ?? 'no options'}` }));
      });
      const result = await session.invokeAgent('helper', 'needs answers');
      return { response: JSON.parse(result.response) as unknown, withdrawn };
    }
    case 'relay-replaced': {
      const first = session.onQuestion(() => [{ id: 'q1', answer: 'from the first handler' }]);
      session.onQuestion(() => [{ id: 'q1', answer: 'from the second handler' }]);
      first(); // no longer the one set: removes nothing
      const answered = JSON.parse((await session.invokeAgent('helper', 'one')).response) as unknown;
      const remove = session.onQuestion(() => [{ id: 'q1', answer: 'from the third handler' }]);
      remove();
      const unanswered = JSON.parse((await session.invokeAgent('helper', 'two')).response) as unknown;
      return { answered, unanswered };
    }
    case 'relay-no-handler':
      return JSON.parse((await session.invokeAgent('helper', 'needs answers')).response) as unknown;
    default:
      throw new Error(`unknown action ${what}`);
  }
}

await serveOneTask(session, async (task, events) => {
  if (mode === 'scenario') {
    const map = new TaskMapper(events);
    map.step('planning');
    map.textDelta('Hello, ');
    map.textDelta('world');
    return map.done();
  }
  if (task.params.text === 'bad-outcome') return { state: 'done' } as never;
  return { state: 'completed', message: JSON.stringify(await act(task.params.text, session, events)) };
});
session.close();
