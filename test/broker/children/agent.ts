/**
 * A scriptable agent worker for the broker tests, written against the worker library. Its task
 * text is a JSON plan (see `Plan`); it runs the plan and ends the task. With `--serve-many` it
 * serves tasks one after the other until its connection closes (a long-lived participant), with
 * `--serve-concurrent` every task as it comes, several at once; otherwise one task.
 * With CHATTY_TEST_PIDS set it writes `<dir>/<pid>` (its admitted name) once it has said hello,
 * so a test can check that no process is left.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AbortError, BrokerError, WorkerSession, openParticipantFd, serveOneTask, taskEvents, type WorkerTask, type TaskEvents } from '../../../main/worker/index.js';
import type { TaskOutcome } from '../../../main/fabric/wire/payloads.js';

type Plan =
  | { echo: string }
  // steps: send `count` status events of `bytes` characters each, as fast as it can, then complete.
  | { steps: { count: number; bytes: number } }
  // chunks: send `count` artifact chunks, each `[i]` and then `size` two-byte characters, then complete.
  | { chunks: { count: number; size: number } }
  // cancelOn: withdraw this call (req.cancel) once a progress event it hears, or a status of this worker's, contains the text.
  | { delegate: { to: string; prompt: Plan; spawn_context?: Record<string, unknown>; cancelOn?: string }; hangUpOn?: string }
  // announce: once cancelled, post "<name> was cancelled" to the root before ending.
  | { hang: true; announce?: boolean }
  // fire: start a call and end this task at once, leaving the call running.
  | { fire: { to: string; prompt: string } }
  | { parallel: Plan[] }
  | { awaitWithdrawn: true }
  | { stubborn: true }
  | { post: { to: string; text: string } }
  | { list: true }
  | { context: true }
  | { seq: Plan[] }
  | { commit: string }
  | { approve: { kind: 'exec' | 'write'; command_or_path: string; asker?: unknown }; times?: number }
  // trailing: when the question is refused, send this text (and a trace in the outcome's metadata) before failing.
  | { ask: { id: string; question: string; options?: string[] }[]; origin?: string; trailing?: string }
  // hold: never answer; report (a status) when the broker withdraws the question.
  | { answering: { id: string; answer: string }[] | 'escalate' | 'hold'; then: Plan };

const socket = openParticipantFd();
const card = { name: 'ignored', description: 'a scriptable test agent', version: '1.0.0', skills: [{ name: 'plans', description: 'runs JSON plans', examples: [] }] };
const { session, hello } = await WorkerSession.hello(socket, card);
if (process.env['CHATTY_TEST_PIDS']) writeFileSync(join(process.env['CHATTY_TEST_PIDS'], String(process.pid)), hello.name);

/** Sees every status this worker sends (for `cancelOn`). */
const statusWatchers = new Set<(message: string) => void>();
/** Resolves once a held question has been withdrawn by the broker. */
let markWithdrawn!: () => void;
const withdrawn = new Promise<void>((resolve) => (markWithdrawn = resolve));

function watched(events: TaskEvents): TaskEvents {
  return {
    status: (state, message) => {
      events.status(state, message);
      for (const watcher of [...statusWatchers]) watcher(message ?? state);
    },
    artifact: (text, lastChunk) => events.artifact(text, lastChunk),
  };
}

async function run(plan: Plan, task: WorkerTask, events: TaskEvents): Promise<TaskOutcome> {
  if ('seq' in plan) {
    let last: TaskOutcome = { state: 'completed' };
    for (const step of plan.seq) {
      last = await run(step, task, events);
      if (last.state !== 'completed') return last;
    }
    return last;
  }
  if ('parallel' in plan) {
    const outcomes = await Promise.all(plan.parallel.map((step) => run(step, task, events)));
    return outcomes.find((o) => o.state !== 'completed') ?? { state: 'completed' };
  }
  if ('awaitWithdrawn' in plan) {
    await withdrawn;
    return { state: 'completed' };
  }
  if ('approve' in plan) {
    // Sent raw (not through session.approve) so that a pre-filled `asker` reaches the broker.
    const one = () =>
      session.call({ method: 'human.approve', params: plan.approve } as never, { signal: task.signal }).then((verdict) => {
        events.status('working', `${hello.name} got ${String(verdict)}`); // as each verdict arrives
        return verdict;
      });
    try {
      const verdicts = await Promise.all(Array.from({ length: plan.times ?? 1 }, one));
      events.artifact(JSON.stringify(verdicts), true);
      return { state: 'completed' };
    } catch (err) {
      if (err instanceof AbortError) return { state: 'canceled', message: `${hello.name} withdrew its approval` };
      throw err;
    }
  }
  if ('ask' in plan) {
    try {
      const answers = await session.ask(plan.ask, { signal: task.signal, ...(plan.origin !== undefined ? { origin: plan.origin } : {}) });
      events.artifact(JSON.stringify(answers), true);
      return { state: 'completed' };
    } catch (err) {
      if (!(err instanceof BrokerError)) throw err;
      if (plan.trailing === undefined) return { state: 'failed', message: err.error.message };
      events.artifact(plan.trailing, true);
      return { state: 'failed', message: err.error.message, metadata: { trace: plan.trailing } };
    }
  }
  if ('answering' in plan) {
    const answering = plan.answering;
    session.onQuestion((request, signal) => {
      const asker = request.request.asker.agent;
      events.status('working', `${hello.name} was asked by ${asker}`);
      if (answering !== 'hold') return answering;
      return new Promise((resolve) =>
        signal.addEventListener('abort', () => {
          events.status('working', `${hello.name}: the question from ${asker} was withdrawn`);
          markWithdrawn();
          resolve('escalate');
        }, { once: true }),
      );
    });
    return run(plan.then, task, events);
  }
  if ('commit' in plan) {
    execFileSync('git', ['-c', 'user.name=agent', '-c', 'user.email=agent@example.invalid', 'commit', '-q', '--allow-empty', '-m', plan.commit], { stdio: 'ignore' });
    return { state: 'completed' };
  }
  if ('steps' in plan) {
    const step = 'x'.repeat(plan.steps.bytes);
    for (let i = 0; i < plan.steps.count; i++) events.status('working', step);
    return { state: 'completed' };
  }
  if ('chunks' in plan) {
    const body = 'é'.repeat(plan.chunks.size);
    for (let i = 0; i < plan.chunks.count; i++) events.artifact(`[${i}]${body}`, i === plan.chunks.count - 1);
    return { state: 'completed' };
  }
  if ('echo' in plan) {
    events.status('working', `${hello.name} echoing`);
    events.artifact(plan.echo, true);
    return { state: 'completed' };
  }
  if ('delegate' in plan) {
    const { to, cancelOn } = plan.delegate;
    const withdraw = new AbortController();
    const watcher = (message: string): void => {
      if (cancelOn !== undefined && message.includes(cancelOn)) withdraw.abort();
    };
    statusWatchers.add(watcher);
    events.status('working', `${hello.name} calling ${to}`);
    try {
      const result = await session.invokeAgent(to, JSON.stringify(plan.delegate.prompt), {
        signal: AbortSignal.any([task.signal, withdraw.signal]),
        ...(plan.delegate.spawn_context ? { spawnContext: plan.delegate.spawn_context } : {}),
        onProgress: (event) => {
          events.status('working', `${hello.name} heard ${JSON.stringify(event)}`);
          if (plan.hangUpOn !== undefined && JSON.stringify(event).includes(plan.hangUpOn)) process.exit(0);
        },
      });
      events.artifact(JSON.stringify(result), true);
      return { state: result.success ? 'completed' : 'failed', ...(result.error ? { message: result.error } : {}) };
    } catch (err) {
      if (err instanceof BrokerError) {
        events.artifact(JSON.stringify(err.error), true);
        return { state: 'failed', message: err.error.message };
      }
      if (task.signal.aborted) return { state: 'canceled', message: `${hello.name} was cancelled while calling ${to}` };
      if (withdraw.signal.aborted) {
        events.artifact(JSON.stringify({ withdrew: to }), true);
        return { state: 'completed' };
      }
      throw err;
    } finally {
      statusWatchers.delete(watcher);
    }
  }
  if ('fire' in plan) {
    void session.invokeAgent(plan.fire.to, plan.fire.prompt).catch(() => {});
    return { state: 'completed' };
  }
  if ('hang' in plan) {
    events.status('working', `${hello.name} waiting`);
    await new Promise<void>((resolve) => task.signal.addEventListener('abort', () => resolve(), { once: true }));
    if (plan.announce) await session.postMessage('root', `${hello.name} was cancelled`);
    return { state: 'canceled', message: `${hello.name} was cancelled` };
  }
  if ('stubborn' in plan) {
    process.on('SIGTERM', () => {}); // ignores the polite stop: only SIGKILL ends it
    events.status('working', `${hello.name} ignoring everything`);
    await new Promise(() => {});
  }
  if ('post' in plan) {
    const result = await session.postMessage(plan.post.to, plan.post.text);
    events.artifact(JSON.stringify(result), true);
    return { state: 'completed' };
  }
  if ('list' in plan) {
    events.artifact(JSON.stringify(await session.listAgents()), true);
    return { state: 'completed' };
  }
  const git = (...args: string[]): string => {
    try {
      return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  events.artifact(JSON.stringify({ cwd: process.cwd(), spawnContext: task.params.spawnContext ?? null, branch: git('rev-parse', '--abbrev-ref', 'HEAD'), head: git('rev-parse', 'HEAD') }), true);
  return { state: 'completed' };
}

const runTask = (task: WorkerTask, events: TaskEvents): Promise<TaskOutcome> => run(JSON.parse(task.params.text) as Plan, task, watched(events));
if (process.argv.includes('--serve-many')) {
  while (await serveOneTask(session, runTask));
} else if (process.argv.includes('--serve-concurrent')) {
  for (let task = await session.nextTask(); task; task = await session.nextTask()) {
    const one = task;
    void runTask(one, taskEvents(session, one.id))
      .catch((err: unknown): TaskOutcome => ({ state: 'failed', message: (err as Error)?.message ?? String(err) }))
      .then((outcome) => session.finish(one.id, outcome));
  }
} else {
  await serveOneTask(session, runTask);
  session.close();
}
