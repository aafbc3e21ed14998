/**
 * A scriptable agent worker for the broker tests, written against the worker library. Its task
 * text is a JSON plan (see `Plan`); it runs the plan and ends the task. With `--serve-many` it
 * serves tasks until its connection closes (a long-lived participant); otherwise one task.
 * With CHATTY_TEST_PIDS set it writes `<dir>/<pid>` (its admitted name) once it has said hello,
 * so a test can check that no process is left.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BrokerError, WorkerSession, openParticipantFd, serveOneTask, type WorkerTask, type TaskEvents } from '../../../main/worker/index.js';
import type { TaskOutcome } from '../../../main/fabric/wire/payloads.js';

type Plan =
  | { echo: string }
  | { delegate: { to: string; prompt: Plan; spawn_context?: Record<string, unknown> }; hangUpOn?: string }
  | { hang: true }
  | { stubborn: true }
  | { post: { to: string; text: string } }
  | { list: true }
  | { context: true }
  | { seq: Plan[] }
  | { commit: string }
  | { approve: { kind: 'exec' | 'write'; command_or_path: string; asker?: unknown }; times?: number }
  | { ask: { id: string; question: string; options?: string[] }[] }
  | { answering: { id: string; answer: string }[] | 'escalate'; then: Plan };

const socket = openParticipantFd();
const card = { name: 'ignored', description: 'a scriptable test agent', version: '1.0.0', skills: [{ name: 'plans', description: 'runs JSON plans', examples: [] }] };
const { session, hello } = await WorkerSession.hello(socket, card);
if (process.env['CHATTY_TEST_PIDS']) writeFileSync(join(process.env['CHATTY_TEST_PIDS'], String(process.pid)), hello.name);

async function run(plan: Plan, task: WorkerTask, events: TaskEvents): Promise<TaskOutcome> {
  if ('seq' in plan) {
    let last: TaskOutcome = { state: 'completed' };
    for (const step of plan.seq) {
      last = await run(step, task, events);
      if (last.state !== 'completed') return last;
    }
    return last;
  }
  if ('approve' in plan) {
    // Sent raw (not through session.approve) so that a pre-filled `asker` reaches the broker.
    const one = () =>
      session.call({ method: 'human.approve', params: plan.approve } as never, { signal: task.signal }).then((verdict) => {
        events.status('working', `${hello.name} got ${String(verdict)}`); // as each verdict arrives
        return verdict;
      });
    const verdicts = await Promise.all(Array.from({ length: plan.times ?? 1 }, one));
    events.artifact(JSON.stringify(verdicts), true);
    return { state: 'completed' };
  }
  if ('ask' in plan) {
    try {
      const answers = await session.ask(plan.ask, { signal: task.signal });
      events.artifact(JSON.stringify(answers), true);
      return { state: 'completed' };
    } catch (err) {
      if (err instanceof BrokerError) return { state: 'failed', message: err.error.message };
      throw err;
    }
  }
  if ('answering' in plan) {
    const answering = plan.answering;
    session.onQuestion((request) => {
      events.status('working', `${hello.name} was asked by ${request.request.asker.agent}`);
      return answering;
    });
    return run(plan.then, task, events);
  }
  if ('commit' in plan) {
    execFileSync('git', ['-c', 'user.name=agent', '-c', 'user.email=agent@example.invalid', 'commit', '-q', '--allow-empty', '-m', plan.commit], { stdio: 'ignore' });
    return { state: 'completed' };
  }
  if ('echo' in plan) {
    events.status('working', `${hello.name} echoing`);
    events.artifact(plan.echo, true);
    return { state: 'completed' };
  }
  if ('delegate' in plan) {
    events.status('working', `${hello.name} calling ${plan.delegate.to}`);
    try {
      const result = await session.invokeAgent(plan.delegate.to, JSON.stringify(plan.delegate.prompt), {
        signal: task.signal,
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
      if (task.signal.aborted) return { state: 'canceled', message: 'cancelled' };
      throw err;
    }
  }
  if ('hang' in plan) {
    events.status('working', `${hello.name} waiting`);
    await new Promise<void>((resolve) => task.signal.addEventListener('abort', () => resolve(), { once: true }));
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

const runTask = (task: WorkerTask, events: TaskEvents): Promise<TaskOutcome> => run(JSON.parse(task.params.text) as Plan, task, events);
if (process.argv.includes('--serve-many')) {
  while (await serveOneTask(session, runTask));
} else {
  await serveOneTask(session, runTask);
  session.close();
}
