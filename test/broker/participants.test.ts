/**
 * A long-lived participant (`openParticipant`) acts within the task it runs: its calls carry that
 * task's chain, climb to that task's caller, and belong to that task's root call. Real children:
 * the scriptable test agent, serving several tasks at once (`--serve-concurrent`).
 */
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { ApprovalRequest, QuestionToRoot } from '../../main/broker/index.js';
import { AGENT, ProgressLog, isAlive, plan, splitJson, startBroker, until, type TestBroker } from './helpers.js';

const QUESTION = [{ id: 'q1', question: 'Which database?', options: ['Postgres', 'SQLite'] }];
const LATE_HELLO = fileURLToPath(new URL('./children/late-hello.ts', import.meta.url));
const FLOOD = fileURLToPath(new URL('./children/flood.ts', import.meta.url));
const ASK_LATER = fileURLToPath(new URL('./children/ask-later.ts', import.meta.url));

/** A unix socket a child connects to (its path is passed as CHATTY_TEST_READY): `connected` is that child's connection. */
async function readySocket(prefix: string): Promise<{ path: string; connected: Promise<Socket>; close(): void }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const server = createServer();
  const connected = new Promise<Socket>((resolve) => server.once('connection', resolve));
  const path = join(dir, 'ready.sock');
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return {
    path,
    connected,
    close() {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Opens `coder-0`, a participant that serves every task as it comes; resolves its pid. */
async function openCoder(t: TestBroker): Promise<number> {
  const opened = await t.broker.openParticipant('coder', process.execPath, ['--import', 'tsx', AGENT, '--serve-concurrent'], { env: { ...process.env, CHATTY_TEST_PIDS: t.pidsDir } });
  return opened.child.pid!;
}

/** The innermost `response` of results nested `depth` deep (each caller's artifact is its callee's result). */
function unwrap(response: string, depth: number): unknown {
  let text = response;
  for (let i = 0; i < depth; i++) text = (JSON.parse(text) as { response: string }).response;
  return JSON.parse(text);
}

describe('a participant running one task acts within it', () => {
  it('the chain runs through the task: root → lead → coder-0 → lead is a cycle; root → a → b → c → coder-0 → d is too deep', async () => {
    const t = startBroker(['lead', 'a', 'b', 'c', 'd']);
    try {
      await openCoder(t);
      const cycle = await t.root.invoke('lead', plan({ delegate: { to: 'coder-0', prompt: { delegate: { to: 'lead', prompt: { echo: 'again' } } } } }));
      assert.deepEqual(unwrap(cycle.response, 1), { kind: 'delegation', refusal: { reason: 'cycle', chain: ['root', 'lead', 'coder'], callee: 'lead' }, message: 'cycle: root -> lead -> coder -> lead' });
      let nested: unknown = { delegate: { to: 'coder-0', prompt: { delegate: { to: 'd', prompt: { echo: 'too deep' } } } } };
      for (const to of ['c', 'b']) nested = { delegate: { to, prompt: nested } };
      const deep = await t.root.invoke('a', plan(nested));
      assert.deepEqual(unwrap(deep.response, 3), { kind: 'delegation', refusal: { reason: 'too_deep', depth: 5, max: 4 }, message: 'too_deep: depth 5 > max 4' });
    } finally {
      await t.close();
    }
  });

  it("its question climbs to the task's caller first; its approval is stamped with the task's chain; its mail reaches the caller's tree", async () => {
    const t = startBroker(['lead']);
    try {
      await openCoder(t);
      const questions: QuestionToRoot[] = [];
      const approvals: ApprovalRequest[] = [];
      t.root.onQuestion((request) => {
        questions.push(request);
        return [{ id: 'q1', answer: 'Postgres' }];
      });
      t.root.onApproval((request) => {
        approvals.push(request);
        return 'approved';
      });
      const progress = new ProgressLog();
      const work = { seq: [{ ask: QUESTION }, { approve: { kind: 'exec', command_or_path: 'make' } }, { post: { to: 'lead-0', text: 'from the coder' } }] };
      const result = await t.root.invoke('lead', plan({ answering: 'escalate', then: { delegate: { to: 'coder-0', prompt: work } } }), { onProgress: progress.push });
      assert.equal(result.success, true, result.error);
      assert.ok(progress.events.some((e) => 'Step' in e && e.Step === 'lead-0 was asked by coder-0'), 'lead-0, the caller, was asked before the root');
      const asker = { agent: 'coder-0', chain: ['root', 'lead', 'coder'] };
      assert.deepEqual(questions, [{ questions: QUESTION, asker }]);
      assert.deepEqual(approvals.map(({ kind, command_or_path, asker }) => ({ kind, command_or_path, asker })), [{ kind: 'exec', command_or_path: 'make', asker }]);
      const coder = JSON.parse(result.response) as { response: string };
      const [answers, verdicts, posted] = splitJson(coder.response) as [unknown, unknown, { status: string }];
      assert.deepEqual(answers, [{ id: 'q1', answer: 'Postgres', custom: false }]);
      assert.deepEqual(verdicts, ['approved']);
      assert.equal(posted.status, 'pending', 'lead-0 is on the tree of the task coder-0 runs');
      // With no task in flight it acts as itself, under the root.
      await t.root.invoke('coder-0', plan({ approve: { kind: 'exec', command_or_path: 'make idle' } }));
      assert.deepEqual(approvals[1]?.asker, { agent: 'coder-0', chain: ['root', 'coder'] });
    } finally {
      await t.close();
    }
  });

  it('a root call with no question handler fails with the question quoted and metadata.clarification, directly and through a caller; the participant lives', async () => {
    const t = startBroker(['lead']);
    try {
      const pid = await openCoder(t);
      const direct = await t.root.invoke('coder-0', plan({ ask: QUESTION }));
      assert.equal(direct.success, false);
      assert.equal(direct.cancelled_by_user, false);
      assert.match(direct.error ?? '', /^coder-0 asked "Which database\?" and this call has no question handler/);
      assert.match(direct.metadata?.clarification?.id ?? '', /^req-\d+$/);
      assert.deepEqual(direct.metadata?.clarification, { id: direct.metadata?.clarification?.id, questions: QUESTION, asker: { agent: 'coder-0', chain: ['root', 'coder'] } });
      const through = await t.root.invoke('lead', plan({ delegate: { to: 'coder-0', prompt: { ask: QUESTION } } }));
      assert.equal(through.success, false);
      assert.deepEqual(through.metadata?.clarification?.asker, { agent: 'coder-0', chain: ['root', 'lead', 'coder'] });
      assert.deepEqual(t.alive(), [pid], "lead-0 was reaped; the participant, whose task was cancelled, lives");
      assert.equal((await t.root.invoke('coder-0', plan({ echo: 'still here' }))).response, 'still here');
    } finally {
      await t.close();
    }
  });
});

describe('a call a participant leaves running', () => {
  it('its callee\'s question climbs past the callers that have ended since to the root', async () => {
    const ready = await readySocket('chatty-ask-later-');
    const t = startBroker(['lead']);
    try {
      t.broker.addVirtualAgent('helper', t.runner({ args: ['--import', 'tsx', ASK_LATER], env: { ...process.env, CHATTY_TEST_PIDS: t.pidsDir, CHATTY_TEST_READY: ready.path } }));
      await openCoder(t);
      const asked: QuestionToRoot[] = [];
      t.root.onQuestion((request) => {
        asked.push(request);
        return [{ id: 'q1', answer: 'a' }];
      });
      const mail = new Promise<string>((resolve) => t.root.onMessage((message) => resolve(message.text)));
      // root → lead-0 → coder-0, whose task starts a call to helper and ends at once: helper's callers are coder-0, lead-0.
      const result = await t.root.invoke('lead', plan({ delegate: { to: 'coder-0', prompt: { fire: { to: 'helper', prompt: 'ask when told' } } } }));
      assert.equal(result.success, true);
      const helper = await ready.connected;
      // The root call is over: lead-0's task has ended and its worker is reaped. coder-0 escalates (it has no handler).
      helper.end('ask');
      assert.equal(await mail, 'helper-0: answered [{"id":"q1","answer":"a","custom":false}]');
      assert.deepEqual(asked.map((request) => request.asker), [{ agent: 'helper-0', chain: ['root', 'lead', 'coder', 'helper'] }]);
    } finally {
      await t.close();
      ready.close();
    }
  });
});

describe('a participant running several tasks at once', () => {
  it('may call only what every task allows (the deepest chain counts), stamps approvals with the deepest chain, and may not ask', async () => {
    const t = startBroker(['lead', 'helper']);
    try {
      await openCoder(t);
      const approvals: ApprovalRequest[] = [];
      t.root.onApproval((request) => {
        approvals.push(request);
        return 'approved';
      });
      t.root.onQuestion(() => assert.fail('an ambiguous question reached the root'));
      const progress = new ProgressLog();
      const controller = new AbortController();
      const held = t.root.invoke('lead', plan({ delegate: { to: 'coder-0', prompt: { hang: true } } }), { onProgress: progress.push, signal: controller.signal });
      await progress.until((e) => 'Step' in e && e.Step.includes('coder-0 waiting'));

      // Its second task comes straight from the root (chain root → coder), yet lead is in the other task's chain.
      const second = await t.root.invoke('coder-0', plan({ seq: [
        { approve: { kind: 'write', command_or_path: 'src/x.ts' } },
        { delegate: { to: 'helper', prompt: { approve: { kind: 'exec', command_or_path: 'npm test' } } } },
        { delegate: { to: 'lead', prompt: { echo: 'x' } } },
      ] }));
      const [, helper, cycle] = splitJson(second.response) as [unknown, { success: boolean }, unknown];
      assert.equal(helper.success, true);
      assert.deepEqual(cycle, { kind: 'delegation', refusal: { reason: 'cycle', chain: ['root', 'lead', 'coder'], callee: 'lead' }, message: 'cycle: root -> lead -> coder -> lead' });
      assert.deepEqual(approvals.map((a) => a.asker), [
        { agent: 'coder-0', chain: ['root', 'lead', 'coder'] },
        { agent: 'helper-0', chain: ['root', 'lead', 'coder', 'helper'] },
      ]);
      const asked = await t.root.invoke('coder-0', plan({ ask: QUESTION }));
      assert.equal(asked.success, false);
      assert.match(asked.error ?? '', /coder-0 is running 2 tasks at once: its question cannot be carried to the caller of one of them/);

      controller.abort();
      assert.equal((await held).cancelled_by_user, true);
    } finally {
      await t.close();
    }
  });

  it("its callee's callees may not call a role in any of its tasks' chains, not only the deepest one's", async () => {
    const t = startBroker(['lead', 'x', 'helper']);
    try {
      await openCoder(t);
      const progress = new ProgressLog();
      const controller = new AbortController();
      // Its first task: root → x → coder-0, held open.
      const held = t.root.invoke('x', plan({ delegate: { to: 'coder-0', prompt: { hang: true } } }), { onProgress: progress.push, signal: controller.signal });
      await progress.until((e) => 'Step' in e && e.Step.includes('coder-0 waiting'));
      // Its second: root → lead → coder-0 → helper → lead, a cycle through the second task's chain.
      const result = await t.root.invoke('lead', plan({ delegate: { to: 'coder-0', prompt: { delegate: { to: 'helper', prompt: { delegate: { to: 'lead', prompt: { echo: 'lead again' } } } } } } }));
      assert.deepEqual(unwrap(result.response, 2), { kind: 'delegation', refusal: { reason: 'cycle', chain: ['root', 'lead', 'coder'], callee: 'lead' }, message: 'cycle: root -> lead -> coder -> lead' });
      controller.abort();
      assert.equal((await held).cancelled_by_user, true);
    } finally {
      await t.close();
    }
  });
});

describe("a participant's life", () => {
  it("one that ignores its task's cancel is not killed: the task ends canceled after the grace period and it serves on", async () => {
    const t = startBroker([]);
    try {
      const pid = await openCoder(t);
      const progress = new ProgressLog();
      const controller = new AbortController();
      const call = t.root.invoke('coder-0', plan({ stubborn: true }), { onProgress: progress.push, signal: controller.signal });
      await progress.until((e) => 'Step' in e && e.Step === 'coder-0 ignoring everything');
      controller.abort();
      const result = await call;
      assert.equal(result.cancelled_by_user, true);
      assert.match(result.error ?? '', /^cancelled: coder-0 did not end its task within 1000 ms$/);
      assert.ok(isAlive(pid));
      assert.equal((await t.root.invoke('coder-0', plan({ echo: 'next task' }))).response, 'next task');
      await t.broker.stop();
      assert.ok(!isAlive(pid), 'stop() ends it, SIGTERM ignored or not');
    } finally {
      await t.close();
    }
  });

  it("a task waiting for room when its participant's connection closes ends failed, never said to be admitted", async () => {
    const t = startBroker([], { serve: { limits: { burst: 0, callsPerSecond: 1e-9 } } });
    try {
      const opened = await t.broker.openParticipant('flood', process.execPath, ['--import', 'tsx', FLOOD]);
      const queue = opened.connection.outbound;
      await until(() => queue.waiters > 0, 'answers waiting for room');
      const progress = new ProgressLog();
      const call = t.root.invoke('flood-0', 'anything', { onProgress: progress.push });
      const tree = (t.broker as unknown as { tree: { servingNames(): string[]; liveTasks: string[] } }).tree;
      await until(() => tree.servingNames().includes('flood-0'), 'the task.run on its way');
      const [taskId] = tree.liveTasks;
      assert.match(taskId ?? '', /^task-[0-9a-f]{32}$/);
      assert.ok(t.broker.ownsTask(taskId!));
      opened.connection.close('closed by the test');
      const result = await call;
      assert.equal(result.success, false);
      assert.match(result.error ?? '', /^disconnected: flood-0's connection closed \(closed by the test\)$/);
      assert.ok(!progress.events.some((e) => 'Admitted' in e), 'the task was never sent');
      assert.ok(!t.broker.ownsTask(taskId!));
      assert.deepEqual(tree.servingNames(), [], 'no participant is left running the task');
    } finally {
      await t.close();
    }
  });

  it("the root's abort cancels a task waiting for room in a participant's full outbound queue", async () => {
    // Every call the flood makes is refused at once by the rate limit (no token, none refilled while
    // the test runs): ~6000 answers, far more than the socket's buffers take, so hundreds wait for
    // room for good (the flood stops reading in libuv, so nothing drains on any Node's buffer sizes).
    const t = startBroker([], { serve: { limits: { burst: 0, callsPerSecond: 1e-9 } } });
    try {
      const opened = await t.broker.openParticipant('flood', process.execPath, ['--import', 'tsx', FLOOD]);
      const queue = opened.connection.outbound;
      await until(() => queue.waiters > 0, 'answers waiting for room'); // the reader never drains it
      const progress = new ProgressLog();
      const controller = new AbortController();
      const call = t.root.invoke('flood-0', 'anything', { onProgress: progress.push, signal: controller.signal });
      // The task is flood-0's once its task.run is being sent, which waits behind those answers.
      const tree = (t.broker as unknown as { tree: { servingNames(): string[] } }).tree;
      await until(() => tree.servingNames().includes('flood-0'), 'the task.run on its way');
      assert.ok(queue.waiters > 0 && !progress.events.some((e) => 'Admitted' in e), 'the task.run waits for room');
      const waiting = queue.waiters;
      controller.abort();
      const result = await call;
      // Withdrawn at once, never written: the flood that stopped reading keeps nothing of it.
      assert.equal(queue.waiters, waiting - 1, 'the task.run was withdrawn, and nothing else found room');
      assert.equal(result.success, false);
      assert.equal(result.cancelled_by_user, true);
      assert.equal(result.error, 'cancelled before flood-0 was sent the task');
      assert.ok(!progress.events.some((e) => 'Admitted' in e), 'the task was never sent');
      assert.deepEqual(tree.servingNames(), [], 'no participant is left running the task');
    } finally {
      await t.close();
    }
  });

  it('one whose child has exited is forgotten: no connection, child or stderr buffer is kept for it', async () => {
    const t = startBroker([]);
    try {
      for (let i = 0; i < 3; i++) {
        const opened = await t.broker.openParticipant('gone', process.execPath, ['--import', 'tsx', AGENT, '--serve-many']);
        const exited = new Promise((resolve) => opened.child.once('exit', resolve));
        opened.child.kill('SIGKILL');
        await exited; // the broker's own 'exit' listener was added first, so it has run
        await opened.connection.closed;
      }
      await openCoder(t);
      const kept = (t.broker as unknown as { longLived: { names(): string[] } }).longLived;
      assert.deepEqual(kept.names(), ['coder-0']);
      assert.deepEqual((await t.root.listAgents()).map((a) => a.name), ['coder-0']);
    } finally {
      await t.close();
    }
  });

  it("one whose child exits while its worker lives on (sh -c 'node worker & …') is closed with it: its calls are cancelled and stop() resolves", { timeout: 180_000 }, async () => {
    const t = startBroker(['helper']);
    try {
      // sh is the child; the worker is its background process, holding fd 3 after sh has gone.
      // sh exits when its stdin ends (the background process reads /dev/null, not that pipe).
      const env = { ...process.env, CHATTY_TEST_PIDS: t.pidsDir, NODE: process.execPath, AGENT };
      const opened = await t.broker.openParticipant('coder', '/bin/sh', ['-c', '"$NODE" --import tsx "$AGENT" --serve-concurrent & read line'], { env });
      // coder-0 starts a call to helper (which waits until cancelled) and ends its task, leaving the call running.
      const fired = await t.root.invoke('coder-0', plan({ fire: { to: 'helper', prompt: plan({ hang: true }) } }));
      assert.equal(fired.success, true, fired.error);
      await until(() => t.broker.registry.get('helper-0') !== undefined, "helper-0's hello");
      const exited = new Promise((resolve) => opened.child.once('exit', resolve));
      opened.child.stdin!.end();
      await exited; // the broker's own 'exit' listener was added first, so it has run
      assert.equal(opened.connection.isOpen, false, 'the connection went with the child');
      assert.deepEqual((await t.root.listAgents()).map((a) => a.name), ['helper'], 'coder-0 is forgotten');
      assert.equal(await opened.connection.closed, "coder-0's process exited");
      await until(() => t.broker.registry.get('helper-0') === undefined, "helper-0's end: coder-0's call to it was cancelled");
      await t.broker.stop();
      const worker = t.pids().find((pid) => readFileSync(join(t.pidsDir, String(pid)), 'utf8') === 'coder-0')!;
      await until(() => !isAlive(worker), 'the background worker ending once its fd 3 was closed');
      assert.deepEqual(t.alive(), []);
    } finally {
      await t.close();
    }
  });

  it("stop() while one is being opened ends its child and waits for its exit, not for a process of the child's that keeps its stdio", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatty-opening-'));
    const fifo = join(dir, 'pids');
    execFileSync('mkfifo', [fifo]);
    const t = startBroker([]);
    let background = 0;
    try {
      // Never says hello; its background sleep inherits its stdout and stderr and outlives it.
      const opening = t.broker.openParticipant('slow', '/bin/sh', ['-c', 'sleep 30 & echo "$$ $!" > "$FIFO"; exec sleep 60'], { env: { ...process.env, FIFO: fifo } });
      opening.catch(() => {});
      const [child, bg] = (await readFile(fifo, 'utf8')).trim().split(' ').map(Number) as [number, number];
      background = bg;
      await t.broker.stop();
      assert.ok(!isAlive(child), 'the child the broker started was reaped');
      assert.ok(isAlive(background), 'stop() did not wait for the background process holding its stdio');
      await assert.rejects(opening, /broker: stopping/);
    } finally {
      if (background && isAlive(background)) process.kill(background, 'SIGKILL');
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('one whose hello comes only after stop() began is closed and reaped, and stop() waits for it', async () => {
    const ready = await readySocket('chatty-late-hello-');
    const t = startBroker([]);
    try {
      // The child ignores SIGTERM and says its hello when it gets one: stop()'s SIGTERM is what brings the hello.
      const opening = t.broker.openParticipant('late', process.execPath, ['--import', 'tsx', LATE_HELLO], { env: { ...process.env, CHATTY_TEST_READY: ready.path } });
      opening.catch(() => {});
      const socket = await ready.connected;
      const pid = Number(await new Promise<string>((resolve) => socket.once('data', (b) => resolve(b.toString()))));
      await t.broker.stop();
      await assert.rejects(opening, /broker: stopping/);
      assert.ok(!isAlive(pid), 'the late participant was reaped before stop() resolved');
      assert.deepEqual(await t.root.listAgents(), []);
    } finally {
      await t.close();
      ready.close();
    }
  });
});
