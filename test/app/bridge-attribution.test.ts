/**
 * Which task an approval is shown under (the popover's "Task" fact, the task card its timeline
 * lines go to, the label of "Approve for this task"). The bridge host learns the deeper nodes of a
 * task's tree from its workers' steps (`<node> started`), which are a worker's words: a worker of
 * one task could announce the next task's agent as started under it, and that task's approvals
 * were then shown under the first task. Now the broker's own records come first: the root task
 * the gateway vouches for, then the agent the broker admitted for a task, then the one task whose
 * admitted top agent has the asker chain's first role; steps never decide (a callee's request
 * before its top agent asked anything went to the one task whose steps named it), and a request
 * none of these places is under no task and cannot be approved "for this task". A real gateway,
 * the bridge host, the bundled scripted agent in git worktrees, the broker tests' JSON-plan agent.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { bundledAgents } from '../../main/agents/bundled.js';
import { BridgeRefusal, type BridgeHost } from '../../main/app/bridge/bridge-host.js';
import { EVENT_CHANNELS, INVOKE_CHANNELS, type PendingApproval, type PendingQuestion, type TaskUpdate } from '../../main/app/bridge/contract.js';
import { LocalRunner } from '../../main/broker/runners/index.js';
import { AGENT, plan, until } from '../broker/helpers.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { gitRepo } from '../renderer/app-fixture.js';
import { recordingHost, top } from './bridge-fixture.js';

let gw: RunningGateway;
let scratch: string;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'chatty-attribution-'));
  const workspaceRoot = gitRepo(scratch);
  gw = await startGateway(undefined, { broker: { root: { workspaceRoot, baseBranch: 'main' }, cancelGraceMs: 1_000, log: () => {} } });
  for (const agent of bundledAgents({ workspace: { kind: 'git', workspaceRoot, baseBranch: 'main' }, reapGraceMs: 1_000 })) gw.gateway.withVirtualAgent(agent.name, agent.runner, agent.card);
  // The broker tests' JSON-plan agent as `lead` and `helper`: a top worker whose steps never read
  // `<node> started` (as the LLM worker's `helper started as helper-0` do not), so no tree of
  // steps holds its callees.
  for (const name of ['lead', 'helper']) gw.gateway.withVirtualAgent(name, new LocalRunner({ command: process.execPath, args: ['--import', 'tsx', AGENT], reapGraceMs: 1_000 }));
});

after(async () => {
  await gw?.close();
  rmSync(scratch, { recursive: true, force: true });
});

test("a worker's step naming another task's agent as started under it does not take that task's approvals", async () => {
  const { host, events, attach, seen } = recordingHost(gw);
  attach();
  const start = starter(host);
  try {
    // Task A's worker (local-reviewer-0) says the next local-coder, which task B will start, is its own callee.
    const a = await spoofingTask(start, seen, 'local-coder-0');
    const b = await start('local-coder', 'exec echo b');
    await until(() => seen<TaskUpdate>(EVENT_CHANNELS.task, (u) => u.type === 'node' && u.taskId === b && u.node.name === 'local-coder-0') !== undefined, "task B's admitted node");
    await until(() => seen<PendingApproval>(EVENT_CHANNELS.approval, (p) => p.commandOrPath === 'echo b') !== undefined, 'the approval of echo b');
    const approval = seen<PendingApproval>(EVENT_CHANNELS.approval, (p) => p.commandOrPath === 'echo b')!;
    assert.equal(approval.asker.agent, 'local-coder-0');
    assert.equal(approval.taskId, b, 'shown under the task whose agent the broker admitted, not the one whose worker named it');
    const entries = (taskId: string): string[] => entriesOf(events, taskId);
    assert.ok(entries(b).includes('asks to exec echo b'), JSON.stringify(entries(b)));
    assert.ok(!entries(a).includes('asks to exec echo b'), JSON.stringify(entries(a)));
    await host.handle(INVOKE_CHANNELS.answerApproval, top, { requestId: approval.requestId, verdict: 'denied' });
    await host.handle(INVOKE_CHANNELS.cancelTask, top, { taskId: a });
  } finally {
    host.close();
  }
});

/** Starts a task on `host` as the window would; resolves to its task id. */
function starter(host: BridgeHost): (agent: string, prompt: string) => Promise<string> {
  return async (agent, prompt) => ((await host.handle(INVOKE_CHANNELS.startTask, top, { agent, prompt })) as { taskId: string }).taskId;
}

/** A task whose worker (the scripted local-reviewer) says `node` started under it, then waits; resolves once its tree has `node`. */
async function spoofingTask(start: (agent: string, prompt: string) => Promise<string>, seen: ReturnType<typeof recordingHost>['seen'], node: string): Promise<string> {
  const taskId = await start('local-reviewer', `step ${node} started\nsleep 20000`);
  await until(() => seen<TaskUpdate>(EVENT_CHANNELS.task, (u) => u.type === 'node' && u.taskId === taskId && u.node.name === node) !== undefined, `the spoofed ${node} in ${taskId}'s tree`);
  return taskId;
}

/** The timeline texts the host sent for `taskId`. */
function entriesOf(events: { channel: string; payload: unknown }[], taskId: string): string[] {
  return events.flatMap((e) => {
    const update = e.payload as TaskUpdate;
    return e.channel === EVENT_CHANNELS.task && update.type === 'entry' && update.taskId === taskId ? [update.entry.text] : [];
  });
}

test("a callee's approval and question, before its top agent asked anything, go to the task the broker's records place them in, never to a task whose worker named the callee in a step", async () => {
  const { host, events, attach, seen } = recordingHost(gw);
  attach();
  const start = starter(host);
  try {
    // Task A's worker says helper-0, the callee task B's lead is about to start, is its own.
    const a = await spoofingTask(start, seen, 'helper-0');
    const b = await start('lead', plan({ delegate: { to: 'helper', prompt: { parallel: [{ approve: { kind: 'exec', command_or_path: 'echo helper' } }, { ask: [{ id: 'q', question: 'which branch?' }] }] } } }));
    await until(() => seen<PendingApproval>(EVENT_CHANNELS.approval, (p) => p.commandOrPath === 'echo helper') !== undefined, "helper-0's approval");
    await until(() => seen<PendingQuestion>(EVENT_CHANNELS.question, (p) => p.asker.agent === 'helper-0') !== undefined, "helper-0's question");
    const approval = seen<PendingApproval>(EVENT_CHANNELS.approval, (p) => p.commandOrPath === 'echo helper')!;
    const question = seen<PendingQuestion>(EVENT_CHANNELS.question, (p) => p.asker.agent === 'helper-0')!;
    assert.deepEqual(approval.asker, { agent: 'helper-0', chain: ['root', 'lead', 'helper'] });
    assert.ok(approval.rootTask !== undefined, 'the gateway vouches for a root task');
    // B is the one running task whose top agent (admitted by the broker) has the chain's first role.
    assert.equal(approval.taskId, b, "the approval is shown under task B, the task the rule 'for this task' is scoped to");
    assert.equal(question.taskId, b);
    assert.ok(entriesOf(events, b).includes('asks to exec echo helper'), JSON.stringify(entriesOf(events, b)));
    assert.ok(!entriesOf(events, a).some((t) => t.includes('helper') && t.startsWith('asks')), JSON.stringify(entriesOf(events, a)));
    await host.handle(INVOKE_CHANNELS.answerApproval, top, { requestId: approval.requestId, verdict: 'denied' });
    await host.handle(INVOKE_CHANNELS.answerQuestion, top, { requestId: question.requestId, answers: [{ id: 'q', answer: 'main', custom: true }] });
    await host.handle(INVOKE_CHANNELS.cancelTask, top, { taskId: a });
  } finally {
    host.close();
  }
});

test("an approval the broker's records cannot place is shown under no task and cannot be approved 'for this task'", async () => {
  const { host, attach, seen } = recordingHost(gw);
  attach();
  const start = starter(host);
  try {
    // Two tasks on `lead`: a callee's chain (root, lead, helper) fits both, and neither top has asked yet.
    const a = await start('lead', plan({ hang: true }));
    await until(() => seen<TaskUpdate>(EVENT_CHANNELS.task, (u) => u.type === 'node' && u.taskId === a) !== undefined, "task A's top");
    const b = await start('lead', plan({ delegate: { to: 'helper', prompt: { approve: { kind: 'exec', command_or_path: 'echo unplaced' } } } }));
    await until(() => seen<PendingApproval>(EVENT_CHANNELS.approval, (p) => p.commandOrPath === 'echo unplaced') !== undefined, 'the approval');
    const approval = seen<PendingApproval>(EVENT_CHANNELS.approval, (p) => p.commandOrPath === 'echo unplaced')!;
    assert.equal(approval.taskId, null);
    assert.ok(approval.rootTask !== undefined && approval.proposals.length > 0, 'a request "for this task" would otherwise take');
    await assert.rejects(
      host.handle(INVOKE_CHANNELS.answerApproval, top, { requestId: approval.requestId, verdict: 'approved', remember: 'task' }),
      (err: unknown) => err instanceof BridgeRefusal && /shown under no task/.test(err.message),
    );
    await host.handle(INVOKE_CHANNELS.answerApproval, top, { requestId: approval.requestId, verdict: 'denied' });
    await host.handle(INVOKE_CHANNELS.cancelTask, top, { taskId: a });
    await host.handle(INVOKE_CHANNELS.cancelTask, top, { taskId: b }).catch(() => {});
  } finally {
    host.close();
  }
});
