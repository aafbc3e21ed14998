/**
 * The worker library (`main/worker`, `chatty-protocol-gateway/worker`) in real child processes on a
 * socketpair at fd 3, served by the real broker end (`openConnection`) with a call handler of the
 * test's own: what each call puts on the wire (recorded byte for byte at the broker's end), what it
 * resolves with, progress, withdrawal, relayed questions, and a library worker against one written
 * by hand in raw NDJSON.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { CallError, RawJson, wireError, type TaskEventParams, type WorkerCall } from '../../main/fabric/index.js';
import { children, report, serving, spawnWorker, type Frame, type SpawnedWorker } from './helpers.js';

after(() => children.forEach((child) => child.kill('SIGKILL')));

const AGENTS = [
  {
    name: 'helper',
    displayName: 'Helper',
    description: 'helps',
    version: '1.0.0',
    skills: [{ name: 'summarise', description: 'summarises a file', examples: ['summarise foo.rs'] }],
    capabilities: { streaming: true },
    origin: 'virtual',
  },
];

const calls = (worker: SpawnedWorker) => worker.recorder.frames.filter((frame) => 'method' in frame && frame.method !== 'task.event');
const linesOf = (worker: SpawnedWorker, method: string) => worker.recorder.lines.filter((line) => line.includes(`"method":"${method}"`));

/** Resolves when the call's signal aborts, with its reason's message. */
function aborted(signal: AbortSignal): Promise<string> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve((signal.reason as Error).message), { once: true }));
}

const cancelled = () => new CallError(wireError({ kind: 'cancelled', reason: 'the caller withdrew' }));

describe('invokeAgent', () => {
  it('sends agent.invoke with only the fields given; progress arrives in order, all before the result', async () => {
    const seen: WorkerCall[] = [];
    const worker = await spawnWorker('library-worker.ts', ['calls'], () =>
      serving({
        'agent.invoke': (call, context) => {
          seen.push(call);
          context.progress({ Admitted: 'helper-0' });
          context.progress({ Step: 'reading foo.rs' });
          context.progress({ Text: 'foo.rs ' });
          context.progress({ Text: 'parses JSON' });
          return {
            success: true,
            response: 'foo.rs parses JSON',
            metadata: { conversation: new RawJson('[{"role":"user","content":"summarise foo.rs"}]') },
            messages: ['from the lead'],
            cancelled_by_user: false,
          };
        },
      }),
    );
    assert.deepEqual(await report(worker, 'invoke'), [
      { progress: { Admitted: 'helper-0' } },
      { progress: { Step: 'reading foo.rs' } },
      { progress: { Text: 'foo.rs ' } },
      { progress: { Text: 'parses JSON' } },
      {
        result: {
          success: true,
          response: 'foo.rs parses JSON',
          metadata: { conversation: '[{"role":"user","content":"summarise foo.rs"}]' },
          messages: ['from the lead'],
          cancelled_by_user: false,
        },
      },
    ]);
    // On the wire: no handle, no include_trace, snake_case spawn_context exactly as given.
    assert.deepEqual(linesOf(worker, 'agent.invoke'), [
      '{"v":3,"id":2,"method":"agent.invoke","params":{"agent":"helper","prompt":"summarise foo.rs","spawn_context":{"workspace_root":"/tmp/ws","roster":["helper"]}}}',
    ]);
    assert.equal(seen.length, 1);
  });

  it("rejects with a BrokerError carrying the broker's wire error", async () => {
    const worker = await spawnWorker('library-worker.ts', ['calls'], () =>
      serving({
        'agent.invoke': (call) => {
          throw new CallError(wireError({ kind: 'unknown_agent', agent: call.params.agent }));
        },
      }),
    );
    assert.deepEqual(await report(worker, 'invoke-unknown'), {
      rejected: 'BrokerError',
      error: { kind: 'unknown_agent', agent: 'nobody', message: 'unknown agent: nobody' },
    });
    assert.deepEqual(linesOf(worker, 'agent.invoke'), ['{"v":3,"id":2,"method":"agent.invoke","params":{"agent":"nobody","prompt":"hello?"}}']);
  });

  it("an aborted signal sends req.cancel for the call and rejects with an AbortError; the broker's late answer settles nothing", async () => {
    let brokerSaw: Promise<string> | undefined;
    const worker = await spawnWorker('library-worker.ts', ['calls'], () =>
      serving({
        'agent.invoke': async (_call, context) => {
          brokerSaw = aborted(context.signal);
          context.progress({ Admitted: 'helper-0' });
          await brokerSaw;
          throw cancelled(); // answered after the withdrawal, as a broker does
        },
        'agent.list': () => AGENTS,
      }),
    );
    assert.deepEqual(await report(worker, 'invoke-abort'), {
      progress: [{ Admitted: 'helper-0' }],
      outcome: { rejected: 'AbortError', name: 'AbortError', code: 'ABORT_ERR', message: 'aborted: call 2 was withdrawn' },
      after: ['helper'],
    });
    assert.equal(await brokerSaw, 'cancelled by the worker');
    assert.deepEqual(calls(worker), [
      { v: 3, id: 1, method: 'session.hello', params: { card: { name: 'mapper', description: 'maps an agent session to task events', version: '1.0.0', skills: [] } } },
      { v: 3, id: 2, method: 'agent.invoke', params: { agent: 'helper', prompt: 'run forever' } },
      { v: 3, method: 'req.cancel', params: { id: 2 } },
      { v: 3, id: 3, method: 'agent.list' },
    ]);
  });

  it('a signal aborted before the call sends nothing at all', async () => {
    const worker = await spawnWorker('library-worker.ts', ['calls'], () => serving({ 'agent.list': () => AGENTS }));
    const got = (await report(worker, 'invoke-pre-aborted')) as { outcome: { rejected: string; name: string }; after: string[] };
    assert.equal(got.outcome.rejected, 'AbortError');
    assert.deepEqual(got.after, ['helper']);
    assert.deepEqual(
      calls(worker).map((frame) => [frame.id, frame.method]),
      [
        [1, 'session.hello'],
        [2, 'agent.list'], // the aborted call never took an id
      ],
    );
  });
});

describe('listAgents and postMessage', () => {
  it('agent.list carries no params on the wire, not even {}', async () => {
    let params: unknown = 'unset';
    const worker = await spawnWorker('library-worker.ts', ['calls'], () =>
      serving({
        'agent.list': (call) => {
          params = (call as Frame).params;
          return AGENTS;
        },
      }),
    );
    assert.deepEqual(await report(worker, 'list'), AGENTS);
    assert.deepEqual(linesOf(worker, 'agent.list'), ['{"v":3,"id":2,"method":"agent.list"}']);
    assert.equal(params, undefined);
  });

  it('mailbox.post sends {to, text} and resolves with the broker’s pending or refused result', async () => {
    const worker = await spawnWorker('library-worker.ts', ['calls'], () =>
      serving({
        'mailbox.post': (call) =>
          call.params.to === 'root' ? { status: 'pending', id: 'msg-1' } : { status: 'refused', reason: 'not_on_tree' },
      }),
    );
    assert.deepEqual(await report(worker, 'post'), [
      { status: 'pending', id: 'msg-1' },
      { status: 'refused', reason: 'not_on_tree' },
    ]);
    assert.deepEqual(linesOf(worker, 'mailbox.post'), [
      '{"v":3,"id":2,"method":"mailbox.post","params":{"to":"root","text":"build is green"}}',
      '{"v":3,"id":3,"method":"mailbox.post","params":{"to":"stranger","text":"hi"}}',
    ]);
  });
});

describe('approve and ask', () => {
  it('approve sends human.approve in snake_case (diff_stat only when given, never an asker) and resolves with the verdict', async () => {
    const worker = await spawnWorker('library-worker.ts', ['calls'], () =>
      serving({ 'human.approve': (call) => (call.params.kind === 'exec' ? 'approved' : 'denied') }),
    );
    assert.deepEqual(await report(worker, 'approve'), ['approved', 'denied']);
    assert.deepEqual(linesOf(worker, 'human.approve'), [
      '{"v":3,"id":2,"method":"human.approve","params":{"kind":"exec","command_or_path":"npm test"}}',
      '{"v":3,"id":3,"method":"human.approve","params":{"kind":"write","command_or_path":"src/a.ts","diff_stat":"+3 -1"}}',
    ]);
  });

  it('an aborted approval sends req.cancel and rejects with an AbortError', async () => {
    let brokerSaw: Promise<string> | undefined;
    const worker = await spawnWorker('library-worker.ts', ['calls'], () =>
      serving({
        'human.approve': async (_call, context) => {
          brokerSaw = aborted(context.signal);
          await brokerSaw;
          return 'denied';
        },
      }),
    );
    assert.deepEqual(await report(worker, 'approve-abort'), {
      rejected: 'AbortError',
      name: 'AbortError',
      code: 'ABORT_ERR',
      message: 'aborted: call 2 was withdrawn',
    });
    assert.equal(await brokerSaw, 'cancelled by the worker');
    assert.deepEqual(calls(worker).slice(1), [
      { v: 3, id: 2, method: 'human.approve', params: { kind: 'exec', command_or_path: 'rm -rf build' } },
      { v: 3, method: 'req.cancel', params: { id: 2 } },
    ]);
  });

  it('ask sends human.ask {questions, origin?} and resolves with the answers array', async () => {
    const worker = await spawnWorker('library-worker.ts', ['calls'], () =>
      serving({
        'human.ask': (call) =>
          call.params.origin === undefined
            ? [
                { id: 'q1', answer: 'pg' },
                { id: 'q2', answer: 'billing', custom: true },
              ]
            : [{ id: 'q3', answer: `yes, says ${call.params.origin}'s human` }],
      }),
    );
    assert.deepEqual(await report(worker, 'ask'), [
      [
        { id: 'q1', answer: 'pg', custom: false },
        { id: 'q2', answer: 'billing', custom: true },
      ],
      [{ id: 'q3', answer: "yes, says peer-7's human", custom: false }],
    ]);
    assert.deepEqual(linesOf(worker, 'human.ask'), [
      '{"v":3,"id":2,"method":"human.ask","params":{"questions":[{"id":"q1","question":"Which database?","options":["pg","sqlite"]},{"id":"q2","question":"Name the service"}]}}',
      '{"v":3,"id":3,"method":"human.ask","params":{"questions":[{"id":"q3","question":"Ship it?","options":["yes","no"]}],"origin":"peer-7"}}',
    ]);
  });

  it('an aborted question sends req.cancel and rejects with an AbortError', async () => {
    let brokerSaw: Promise<string> | undefined;
    const worker = await spawnWorker('library-worker.ts', ['calls'], () =>
      serving({
        'human.ask': async (_call, context) => {
          brokerSaw = aborted(context.signal);
          await brokerSaw;
          throw cancelled();
        },
      }),
    );
    assert.equal(((await report(worker, 'ask-abort')) as { rejected: string }).rejected, 'AbortError');
    assert.equal(await brokerSaw, 'cancelled by the worker');
    assert.deepEqual(calls(worker).slice(2), [{ v: 3, method: 'req.cancel', params: { id: 2 } }]);
  });
});

describe('onQuestion: questions relayed to this worker from its callees', () => {
  const ASKER = { agent: 'helper-0', chain: ['root', 'worker', 'helper'] };
  let relays = 0;
  /** A relayed copy as the broker sends it: under a question id of its own, the asker's request inside. */
  const relayed = (question: string, options: string[] = []) => ({
    question: `question-${++relays}`,
    request: { questions: [{ id: 'q1', question, options }], asker: ASKER },
  });

  it('the handler answers, escalates, fails, and sees its signal abort when the broker withdraws the question', async () => {
    const worker = await spawnWorker('library-worker.ts', ['calls'], (self) =>
      serving({
        // While the worker's call is in flight, its callee's questions come to it, as the broker relays them.
        'agent.invoke': async () => {
          const { connection, recorder } = self();
          const settle = (asked: Promise<unknown>) => asked.catch((err: Error & { error?: unknown }) => ({ rejected: err.name, error: err.error }));
          const answered = await connection.request('human.ask', relayed('Which database?', ['pg', 'sqlite']));
          const escalated = await connection.request('human.ask', relayed('Should I escalate this?'));
          const thrown = await settle(connection.request('human.ask', relayed('throw it')));
          const misfit = await settle(connection.request('human.ask', relayed('a misfit reply')));
          const withdraw = new AbortController();
          const withdrawn = settle(connection.request('human.ask', relayed('withdraw me'), withdraw.signal));
          withdraw.abort();
          // The worker still answers the withdrawn question once its handler has seen the abort.
          const lateAnswer = await recorder.next((frame) => 'error' in frame && (frame.error as { kind: string }).kind === 'cancelled');
          const response = JSON.stringify({ answered, escalated, thrown, misfit, withdrawn: await withdrawn, lateAnswer });
          return { success: true, response, messages: [], cancelled_by_user: false };
        },
      }),
    );
    type Misfit = { rejected: string; error: { kind: string; reason: string; message: string } };
    const got = (await report(worker, 'relay')) as { response: { misfit: Misfit }; withdrawn: string[] };
    const { misfit, ...response } = got.response;
    // A reply that does not fit the wire is answered `failed`, naming the fields at fault, instead of being sent.
    assert.equal(misfit.rejected, 'Error');
    assert.equal(misfit.error.kind, 'failed');
    assert.match(misfit.error.reason, /^the question handler's reply does not fit the wire: answers\.0\.id: .*string.*; answers\.0\.answer: /);
    assert.deepEqual({ response, withdrawn: got.withdrawn }, {
      response: {
        answered: { answers: [{ id: 'q1', answer: 'helper-0 asked Which database?; pg', custom: false }] },
        escalated: 'escalate',
        thrown: { rejected: 'Error', error: { kind: 'failed', reason: 'cannot decide', message: 'cannot decide' } },
        withdrawn: { rejected: 'AbortError' },
        lateAnswer: { v: 3, id: 6, error: { kind: 'cancelled', reason: 'the question was withdrawn', message: 'cancelled: the question was withdrawn' } },
      },
      withdrawn: ['cancelled by the broker'],
    });
    // The answers as the worker wrote them: {answers} and a bare "escalate".
    const answers = worker.recorder.lines.filter((line) => /^\{"v":3,"id":[2-6],"(result|error)"/.test(line));
    assert.deepEqual(answers.slice(0, 2), [
      '{"v":3,"id":2,"result":{"answers":[{"id":"q1","answer":"helper-0 asked Which database?; pg"}]}}',
      '{"v":3,"id":3,"result":"escalate"}',
    ]);
  });

  it('without a handler (never set, or removed) the worker answers "escalate"; a new handler replaces the old', async () => {
    const ask = (self: () => SpawnedWorker) => async () => {
      const answer = await self().connection.request('human.ask', relayed('Which database?'));
      return { success: true, response: JSON.stringify(answer), messages: [], cancelled_by_user: false };
    };
    const bare = await spawnWorker('library-worker.ts', ['calls'], (self) => serving({ 'agent.invoke': ask(self) }));
    assert.equal(await report(bare, 'relay-no-handler'), 'escalate');
    assert.ok(bare.recorder.lines.includes('{"v":3,"id":2,"result":"escalate"}'));

    const replaced = await spawnWorker('library-worker.ts', ['calls'], (self) => serving({ 'agent.invoke': ask(self) }));
    assert.deepEqual(await report(replaced, 'relay-replaced'), {
      answered: { answers: [{ id: 'q1', answer: 'from the second handler', custom: false }] },
      unanswered: 'escalate',
    });
  });
});

describe('an argument the wire does not take', () => {
  it('throws at the call site (TypeError or RangeError naming the field), sends nothing, and the connection goes on', async () => {
    const worker = await spawnWorker('library-worker.ts', ['calls'], () => serving({ 'agent.list': () => AGENTS }));
    assert.deepEqual(await report(worker, 'misuse'), {
      seen: {
        status: { threw: 'RangeError', message: 'events.status: state must be one of "submitted", "working", not "thinking"', sync: true },
        artifact: { threw: 'TypeError', message: 'events.artifact: text must be a string (got 42)' },
        approve: { threw: 'RangeError', message: 'human.approve: kind must be one of "exec", "write", not "run"' },
        ask: { threw: 'TypeError', message: 'human.ask: questions.0 has a field the wire does not take: hint' },
        invoke: { threw: 'TypeError', message: 'agent.invoke: prompt is required (a string)' },
        finish: { threw: 'RangeError', message: 'finish: taskId must be at least 0 (got -1)' },
      },
      after: ['helper'],
    });
    // On the wire: the hello, then only the one good call; no task.event at all.
    assert.deepEqual(
      worker.recorder.frames.filter((frame) => 'method' in frame).map((frame) => frame['method']),
      ['session.hello', 'agent.list'],
    );
  });

  it('a runner that returns an outcome the wire does not take ends its task failed, saying why', async () => {
    const worker = await spawnWorker('library-worker.ts', ['calls']);
    const task = await worker.connection.runTask({ taskId: 'task-bad-outcome', text: 'bad-outcome' });
    assert.deepEqual(await task.outcome, {
      state: 'failed',
      message: 'the task runner\'s outcome: state must be one of "completed", "failed", "canceled", not "done"',
    });
  });
});

describe('a library worker and a raw NDJSON worker', () => {
  async function observe(script: string, args: string[]) {
    const worker = await spawnWorker(script, args);
    const events: TaskEventParams[] = [];
    const task = await worker.connection.runTask({ taskId: 'task-1', text: 'greet' }, (event) => events.push(event));
    const outcome = await task.outcome;
    const reason = await worker.connection.closed;
    return { lines: worker.recorder.lines, events, outcome, reason, name: worker.node.name };
  }

  it('are indistinguishable to the broker: the same bytes for a step, two text deltas and a result', async () => {
    const library = await observe('library-worker.ts', ['scenario']);
    const raw = await observe('raw-worker.ts', []);
    assert.deepEqual(library.lines, [
      '{"v":3,"id":1,"method":"session.hello","params":{"card":{"name":"mapper","description":"maps an agent session to task events","version":"1.0.0","skills":[]}}}',
      '{"v":3,"method":"task.event","params":{"kind":"status","id":1,"state":"working","message":"planning"}}',
      '{"v":3,"method":"task.event","params":{"kind":"artifact","id":1,"text":"Hello, ","lastChunk":false}}',
      '{"v":3,"method":"task.event","params":{"kind":"artifact","id":1,"text":"world","lastChunk":true}}',
      '{"v":3,"id":1,"result":{"state":"completed"}}',
    ]);
    assert.deepEqual(raw.lines, library.lines);
    assert.deepEqual(raw.events, library.events);
    assert.deepEqual(raw.outcome, library.outcome);
    assert.deepEqual(library.outcome, { state: 'completed' });
    assert.equal(raw.reason, library.reason);
    assert.equal(raw.name, library.name);
  });
});

describe('the package subpath', () => {
  it('chatty-protocol-gateway/worker is exported and names the build of main/worker/index.ts', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { exports: Record<string, unknown> };
    assert.deepEqual(pkg.exports['./worker'], { types: './out/main/worker/index.d.ts', default: './out/main/worker/index.js' });
    assert.ok(readFileSync(new URL('../../main/worker/index.ts', import.meta.url), 'utf8').includes('WorkerSession'));
  });
});
