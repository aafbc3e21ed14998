/**
 * The broker with real child processes: virtual agents started by a LocalRunner running the
 * scriptable test agent (test/broker/children/agent.ts), the root in process.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MAILBOX_PENDING_BYTES, RootCallError } from '../../main/broker/index.js';
import type { MailboxOutcome, RootMessage } from '../../main/broker/index.js';
import { ProgressLog, plan, splitJson, startBroker, AGENT } from './helpers.js';

describe('agent.invoke through the broker', () => {
  it('a three-level delegation (root → lead → helper, both virtual) reports progress to the root in order', async () => {
    const t = startBroker(['lead', 'helper']);
    try {
      const progress = new ProgressLog();
      const result = await t.root.invoke('lead', plan({ delegate: { to: 'helper', prompt: { echo: 'hi from helper' } } }), { onProgress: progress.push });
      assert.equal(result.success, true, result.error);
      assert.equal(result.cancelled_by_user, false);
      const inner = JSON.parse(result.response) as { success: boolean; response: string };
      assert.deepEqual({ success: inner.success, response: inner.response }, { success: true, response: 'hi from helper' });
      assert.deepEqual(progress.events, [
        { Admitted: 'lead-0' },
        { Step: 'lead-0 calling helper' },
        { Step: 'lead-0 heard {"Admitted":"helper-0"}' },
        { Step: 'lead-0 heard {"Step":"helper-0 echoing"}' },
        { Step: 'lead-0 heard {"Text":"hi from helper"}' },
        { Text: result.response },
      ]);
      assert.deepEqual(t.alive(), [], 'every worker was reaped when its task ended');
    } finally {
      await t.close();
    }
  });

  it('a name is never handed out twice: helper-0, then helper-1', async () => {
    const t = startBroker(['helper']);
    try {
      const admitted: string[] = [];
      for (let i = 0; i < 2; i++) {
        await t.root.invoke('helper', plan({ echo: String(i) }), { onProgress: (e) => 'Admitted' in e && admitted.push(e.Admitted) });
      }
      assert.deepEqual(admitted, ['helper-0', 'helper-1']);
    } finally {
      await t.close();
    }
  });

  it('agent.list answers every role with its origin, to the root and to a worker', async () => {
    const t = startBroker(['lead']);
    try {
      await t.broker.openParticipant('coder', process.execPath, ['--import', 'tsx', AGENT, '--serve-many'], { env: { ...process.env, CHATTY_TEST_PIDS: t.pidsDir } });
      const fromRoot = await t.root.listAgents();
      assert.deepEqual(fromRoot.map((a) => [a.name, a.origin]), [['coder-0', 'participant'], ['lead', 'virtual']]);
      assert.deepEqual(fromRoot[0]!.skills, [{ name: 'plans', description: 'runs JSON plans', examples: [] }]);
      const result = await t.root.invoke('lead', plan({ list: true }));
      // lead-0, the worker running this very task, is no role: it is not listed.
      assert.deepEqual((JSON.parse(result.response) as { name: string; origin: string }[]).map((a) => [a.name, a.origin]), [['coder-0', 'participant'], ['lead', 'virtual']]);
      // A long-lived participant is reached by its admitted name.
      const progress = new ProgressLog();
      const byName = await t.root.invoke('coder-0', plan({ echo: 'from the coder' }), { onProgress: progress.push });
      assert.equal(byName.response, 'from the coder');
      assert.deepEqual(progress.events[0], { Admitted: 'coder-0' });
      await t.broker.stop();
      assert.deepEqual(t.alive(), [], 'stop() reaped the long-lived participant');
    } finally {
      await t.close();
    }
  });

  it("a virtual agent's worker is no role: not called by name (from the root or another tree), not listed, not on the root's roster", async () => {
    const t = startBroker(['a', 'b']);
    try {
      const progress = new ProgressLog();
      const controller = new AbortController();
      const busy = t.root.invoke('a', plan({ hang: true }), { onProgress: progress.push, signal: controller.signal });
      await progress.until((e) => 'Step' in e && e.Step === 'a-0 waiting');
      await assert.rejects(t.root.invoke('a-0', plan({ echo: 'a second task' })), (err: unknown) => err instanceof RootCallError && err.message === 'unknown agent: a-0');
      assert.deepEqual((await t.root.listAgents()).map((a) => a.name), ['a', 'b']);
      const fromB = await t.root.invoke('b', plan({ seq: [{ list: true }, { context: true }, { delegate: { to: 'a-0', prompt: { echo: 'a second task' } } }] }));
      const [listed, context, refused] = splitJson(fromB.response) as [{ name: string }[], { spawnContext: { roster: string[] } }, unknown];
      assert.deepEqual(listed.map((a) => a.name), ['a', 'b']);
      assert.deepEqual(context.spawnContext.roster, ['a', 'b'], "the root's default roster names roles only");
      assert.deepEqual(refused, { kind: 'unknown_agent', agent: 'a-0', message: 'unknown agent: a-0' });
      // Still a live node: never served over HTTP while it lives.
      assert.equal(t.broker.isRole('a-0'), true);
      controller.abort();
      assert.equal((await busy).error, 'a-0 was cancelled', 'a-0 ran its one task only');
      assert.equal(t.broker.isRole('a-0'), false);
    } finally {
      await t.close();
    }
  });
});

describe('several calls from one worker', () => {
  it('are answered out of order, each under its own id', async () => {
    const t = startBroker(['lead', 'slow', 'quick']);
    try {
      const progress = new ProgressLog();
      // The slow call's approval is granted only once lead-0 has the quick call's result.
      t.root.onApproval(async (): Promise<'approved'> => {
        await progress.until((e) => 'Text' in e && e.Text.includes('"response":"quick"'));
        return 'approved';
      });
      const result = await t.root.invoke('lead', plan({ parallel: [
        { delegate: { to: 'slow', prompt: { approve: { kind: 'exec', command_or_path: 'make' } } } },
        { delegate: { to: 'quick', prompt: { echo: 'quick' } } },
      ] }), { onProgress: progress.push });
      assert.equal(result.success, true, result.error);
      const [first, second] = splitJson(result.response) as { success: boolean; response: string }[];
      assert.deepEqual([first?.response, second?.response], ['quick', '["approved"]']);
    } finally {
      await t.close();
    }
  });

  it("a worker's req.cancel withdraws one call (its callee's task is cancelled) while its other calls go on", async () => {
    const t = startBroker(['lead', 'waiter', 'approver']);
    try {
      const cancelled = new Promise<string>((resolve) => t.root.onMessage((m) => resolve(m.text)));
      // The approver's call waits at the root until the withdrawn call's worker has been cancelled.
      t.root.onApproval(async (): Promise<'approved'> => {
        assert.equal(await cancelled, 'waiter-0 was cancelled');
        return 'approved';
      });
      const result = await t.root.invoke('lead', plan({ parallel: [
        { delegate: { to: 'waiter', prompt: { hang: true, announce: true }, cancelOn: 'waiter-0 waiting' } },
        { delegate: { to: 'approver', prompt: { approve: { kind: 'exec', command_or_path: 'make' } } } },
      ] }));
      assert.equal(result.success, true, result.error);
      const [withdrawn, approved] = splitJson(result.response) as [unknown, { success: boolean; response: string }];
      assert.deepEqual(withdrawn, { withdrew: 'waiter' });
      assert.deepEqual({ success: approved.success, response: approved.response }, { success: true, response: '["approved"]' });
      assert.deepEqual(t.alive(), []);
    } finally {
      await t.close();
    }
  });
});

describe('cancellation reaps what a call started', () => {
  it('aborting a root call cancels and reaps the whole tree under it', async () => {
    const t = startBroker(['lead', 'helper']);
    try {
      const told: string[] = [];
      t.root.onMessage((m) => told.push(m.text));
      const progress = new ProgressLog();
      const controller = new AbortController();
      const call = t.root.invoke('lead', plan({ delegate: { to: 'helper', prompt: { hang: true, announce: true } } }), { onProgress: progress.push, signal: controller.signal });
      await progress.until((e) => 'Step' in e && e.Step.includes('helper-0 waiting'));
      assert.equal(t.alive().length, 2);
      controller.abort();
      const result = await call;
      assert.equal(result.cancelled_by_user, true);
      assert.equal(result.success, false);
      // Each worker got a req.cancel for its task.run and ended it itself (no grace period ran out).
      assert.equal(result.error, 'lead-0 was cancelled while calling helper');
      assert.deepEqual(told, ['helper-0 was cancelled']);
      assert.deepEqual(t.alive(), [], 'no worker of the tree is left');
    } finally {
      await t.close();
    }
  });

  it('a worker that ignores its cancel and SIGTERM is killed; the call still ends', async () => {
    const t = startBroker(['stubborn']);
    try {
      const progress = new ProgressLog();
      const controller = new AbortController();
      const call = t.root.invoke('stubborn', plan({ stubborn: true }), { onProgress: progress.push, signal: controller.signal });
      await progress.until((e) => 'Step' in e && e.Step.includes('ignoring everything'));
      controller.abort();
      const result = await call;
      assert.equal(result.cancelled_by_user, true);
      assert.match(result.error ?? '', /did not end its task within 1000 ms/);
      assert.deepEqual(t.alive(), []);
    } finally {
      await t.close();
    }
  });

  it('a worker hanging up mid-call cancels its own callees', async () => {
    const t = startBroker(['lead', 'helper']);
    try {
      const result = await t.root.invoke('lead', plan({ delegate: { to: 'helper', prompt: { hang: true } }, hangUpOn: 'helper-0 waiting' }));
      assert.equal(result.success, false);
      assert.match(result.error ?? '', /disconnected: lead-0's connection closed/);
      assert.equal(t.pids().length, 2, 'both workers had started');
      assert.deepEqual(t.alive(), [], 'the helper was cancelled and reaped with its caller gone');
    } finally {
      await t.close();
    }
  });

  it('stop() with tasks in flight leaves no process behind', async () => {
    const t = startBroker(['lead', 'helper']);
    const progress = new ProgressLog();
    const call = t.root.invoke('lead', plan({ delegate: { to: 'helper', prompt: { hang: true } } }), { onProgress: progress.push });
    await progress.until((e) => 'Step' in e && e.Step.includes('helper-0 waiting'));
    await t.broker.stop();
    assert.deepEqual(t.alive(), []);
    const result = await call;
    assert.equal(result.success, false);
    await assert.rejects(t.root.invoke('lead', plan({ echo: 'late' })), (err: unknown) => err instanceof RootCallError && /stopping/.test(err.message));
    await t.close();
  });
});

describe('refusals', () => {
  it('an unknown agent, from the root and from a worker', async () => {
    const t = startBroker(['lead']);
    try {
      await assert.rejects(t.root.invoke('nobody', 'x'), (err: unknown) => err instanceof RootCallError && err.error.kind === 'unknown_agent' && err.message === 'unknown agent: nobody');
      const result = await t.root.invoke('lead', plan({ delegate: { to: 'nobody', prompt: { echo: 'x' } } }));
      assert.deepEqual(JSON.parse(result.response), { kind: 'unknown_agent', agent: 'nobody', message: 'unknown agent: nobody' });
    } finally {
      await t.close();
    }
  });

  it('delegation: not_listed, cycle, too_deep', async () => {
    const t = startBroker(['a', 'b', 'c', 'd', 'e'], { root: { roster: ['a', 'b', 'c', 'd', 'e'] } });
    try {
      const listed = startBroker(['lead', 'helper'], { root: { roster: ['lead'] } });
      try {
        await assert.rejects(listed.root.invoke('helper', 'x'), (err: unknown) => {
          assert.ok(err instanceof RootCallError);
          assert.deepEqual(err.error, { kind: 'delegation', refusal: { reason: 'not_listed', caller: 'root', callee: 'helper' }, message: "not_listed: helper is not on root's roster" });
          return true;
        });
      } finally {
        await listed.close();
      }
      // a → b → a: a is already in the chain.
      const cycle = await t.root.invoke('a', plan({ delegate: { to: 'b', prompt: { delegate: { to: 'a', prompt: { echo: 'x' } } } } }));
      const bResult = JSON.parse(cycle.response) as { response: string };
      assert.deepEqual(JSON.parse(bResult.response), { kind: 'delegation', refusal: { reason: 'cycle', chain: ['root', 'a', 'b'], callee: 'a' }, message: 'cycle: root -> a -> b -> a' });
      // root → a → b → c → d is depth 4; d → e would be depth 5.
      let nested: unknown = { delegate: { to: 'e', prompt: { echo: 'too deep' } } };
      for (const to of ['d', 'c', 'b']) nested = { delegate: { to, prompt: nested } };
      let response = (await t.root.invoke('a', plan(nested))).response;
      for (let i = 0; i < 3; i++) response = (JSON.parse(response) as { response: string }).response;
      assert.deepEqual(JSON.parse(response), { kind: 'delegation', refusal: { reason: 'too_deep', depth: 5, max: 4 }, message: 'too_deep: depth 5 > max 4' });
    } finally {
      await t.close();
    }
  });

  it('spawn_context_refused: a workspace outside the caller\'s, via .. and via a symlink', async () => {
    const base = mkdtempSync(join(tmpdir(), 'chatty-broker-ws-'));
    const tree = join(base, 'tree');
    mkdirSync(join(tree, 'sub'), { recursive: true });
    mkdirSync(join(base, 'outside'));
    symlinkSync(join(base, 'outside'), join(tree, 'link'));
    const t = startBroker(['lead'], { root: { workspaceRoot: tree } });
    try {
      // A literal `..` segment (path.join would fold it away before the broker saw it).
      for (const path of [`${tree}/../outside`, join(tree, 'link')]) {
        await assert.rejects(t.root.invoke('lead', 'x', { spawnContext: { workspace_root: path, roster: [] } }), (err: unknown) => {
          assert.ok(err instanceof RootCallError);
          assert.equal(err.error.kind, 'spawn_context_refused');
          assert.ok(err.message.startsWith(`spawn context refused: workspace_root: ${JSON.stringify(path)} (really `), err.message);
          assert.match(err.message, /is not inside the caller's workspace/);
          return true;
        });
      }
      const inside = await t.root.invoke('lead', plan({ context: true }), { spawnContext: { workspace_root: join(tree, 'sub'), roster: [] } });
      assert.equal((JSON.parse(inside.response) as { spawnContext: { workspace_root: string } }).spawnContext.workspace_root, join(tree, 'sub'));
      assert.deepEqual(t.pids().length, 1, 'the refused calls started no worker');
    } finally {
      await t.close();
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('runners', () => {
  it('a failing workspace factory fails the task; no child is spawned', async () => {
    const t = startBroker([]);
    try {
      t.broker.addVirtualAgent('boxed', t.runner({ workspaceFactory: { create: async () => { throw new Error('no room for a workspace'); } } }));
      const result = await t.root.invoke('boxed', plan({ echo: 'never' }));
      assert.equal(result.success, false);
      assert.match(result.error ?? '', /no room for a workspace/);
      assert.deepEqual(t.pids(), []);
    } finally {
      await t.close();
    }
  });

  it('a worker that never says hello fails the task with the tail of its stderr', async () => {
    const t = startBroker([]);
    try {
      // It complains on stderr, then hangs up fd 3 without a word on it (and would stay alive,
      // but the broker reaps it): no timing involved, whatever the machine's load.
      const script = 'const s = new (require("node:net").Socket)({ fd: 3 }); process.stderr.write("mute: no model configured\\n", () => s.destroy()); setInterval(() => {}, 1000)';
      t.broker.addVirtualAgent('mute', t.runner({ args: ['-e', script] }));
      const result = await t.root.invoke('mute', 'x');
      assert.equal(result.success, false);
      assert.match(result.error ?? '', /mute-0[\s\S]*no model configured/);
    } finally {
      await t.close();
    }
  });
});

describe('mailbox.post', () => {
  it('to the root (onMessage at once), to itself (in its next invoke result), and its refusals', async () => {
    const t = startBroker(['lead', 'helper']);
    try {
      const got: RootMessage[] = [];
      const unsubscribe = t.root.onMessage((m) => got.push(m));
      const result = await t.root.invoke('lead', plan({
        seq: [
          { post: { to: 'root', text: 'hello root' } },
          { post: { to: 'nobody-0', text: 'lost' } },
          { post: { to: 'lead-0', text: 'note to self' } },
          { delegate: { to: 'helper', prompt: { echo: 'done' } } },
          { post: { to: 'helper-0', text: 'too late' } },
          { post: { to: 'root', text: 'x'.repeat(9 * 1024) } },
        ],
      }));
      unsubscribe();
      assert.equal(result.success, true, result.error);
      assert.deepEqual(got.map((m) => [m.from, m.text]), [['lead-0', 'hello root']]);
      // The artifacts, in order: one per step.
      const [toRoot, lost, toSelf, delegated, late, big] = splitJson(result.response);
      assert.equal((toRoot as { status: string }).status, 'pending');
      assert.deepEqual(lost, { status: 'refused', reason: 'not_on_tree' });
      assert.equal((toSelf as { status: string }).status, 'pending');
      assert.deepEqual((delegated as { messages: string[] }).messages, ['lead-0: note to self']);
      assert.deepEqual(late, { status: 'refused', reason: 'recipient_ended' });
      assert.deepEqual(big, { status: 'refused', reason: 'over_allowance' });
      assert.deepEqual(await t.root.post('lead-0', 'after the end'), { status: 'refused', reason: 'recipient_ended' });
    } finally {
      await t.close();
    }
  });

  it('a recipient holds at most 64 KiB undelivered: over_allowance until its mail is delivered', async () => {
    const t = startBroker(['lead', 'helper']);
    try {
      const byRoot: MailboxOutcome[] = [];
      // While lead-0 waits for its approval, the root (which has no allowance of its own) fills its box.
      t.root.onApproval(async (): Promise<'approved'> => {
        byRoot.push(await t.root.post('lead-0', 'x'.repeat(MAILBOX_PENDING_BYTES)));
        byRoot.push(await t.root.post('lead-0', 'y'));
        return 'approved';
      });
      const result = await t.root.invoke('lead', plan({ seq: [
        { approve: { kind: 'exec', command_or_path: 'wait' } },
        { delegate: { to: 'helper', prompt: { post: { to: 'lead-0', text: 'one more' } } } },
        { delegate: { to: 'helper', prompt: { post: { to: 'lead-0', text: 'after delivery' } } } },
      ] }));
      assert.equal(result.success, true, result.error);
      assert.deepEqual(byRoot.map((o) => o.status === 'refused' ? o.reason : o.status), ['pending', 'over_allowance']);
      const [, full, drained] = splitJson(result.response) as [unknown, { response: string; messages: string[] }, { response: string; messages: string[] }];
      assert.deepEqual(JSON.parse(full.response), { status: 'refused', reason: 'over_allowance' }, 'helper-0 had its allowance; the box was full');
      assert.deepEqual(full.messages, [`root: ${'x'.repeat(MAILBOX_PENDING_BYTES)}`]);
      assert.equal((JSON.parse(drained.response) as { status: string }).status, 'pending');
      assert.deepEqual(drained.messages, ['helper-1: after delivery']);
    } finally {
      await t.close();
    }
  });
});

describe('the outcome of a root call', () => {
  it('AGE-321: once a root call with no question handler has failed with the question, nothing its worker sends afterwards joins the result', async () => {
    const t = startBroker(['asker']);
    try {
      const question = [{ id: 'q1', question: 'Which database?', options: [] }];
      const result = await t.root.invoke('asker', plan({ seq: [{ echo: 'before the question' }, { ask: question, trailing: 'after the refusal' }] }));
      assert.equal(result.success, false);
      assert.match(result.error ?? '', /^asker-0 asked "Which database\?" and this call has no question handler/);
      assert.equal(result.response, 'before the question', 'the text sent before the question is kept, none sent after');
      assert.deepEqual(Object.keys(result.metadata ?? {}), ['clarification'], "the worker's later outcome adds no metadata");
      assert.deepEqual(t.alive(), []);
    } finally {
      await t.close();
    }
  });
});
