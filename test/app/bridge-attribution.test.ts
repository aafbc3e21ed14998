/**
 * Which task an approval is shown under (the popover's "Task" fact, the task card its timeline
 * lines go to, the label of "Approve for this task"). The bridge host learns the deeper nodes of a
 * task's tree from its workers' steps (`<node> started`), which are a worker's words: a worker of
 * one task could announce the next task's agent as started under it, and that task's approvals
 * were then shown under the first task. Now the broker's own records come first: the root task
 * the gateway vouches for, then the agent the broker admitted for a task; a node named only by
 * steps of two tasks is ambiguous (no task). A real gateway, the bridge host, the bundled
 * scripted agent in git worktrees.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { bundledAgents } from '../../main/agents/bundled.js';
import { EVENT_CHANNELS, INVOKE_CHANNELS, type PendingApproval, type TaskUpdate } from '../../main/app/bridge/contract.js';
import { until } from '../broker/helpers.js';
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
});

after(async () => {
  await gw?.close();
  rmSync(scratch, { recursive: true, force: true });
});

test("a worker's step naming another task's agent as started under it does not take that task's approvals", async () => {
  const { host, events, attach, seen } = recordingHost(gw);
  attach();
  const start = async (agent: string, prompt: string): Promise<string> => ((await host.handle(INVOKE_CHANNELS.startTask, top, { agent, prompt })) as { taskId: string }).taskId;
  try {
    // Task A's worker (local-reviewer-0) says the next local-coder, which task B will start, is its own callee.
    const a = await start('local-reviewer', 'step local-coder-0 started\nsleep 20000');
    await until(() => seen<TaskUpdate>(EVENT_CHANNELS.task, (u) => u.type === 'node' && u.taskId === a && u.node.name === 'local-coder-0') !== undefined, "task A's spoofed node");
    const b = await start('local-coder', 'exec echo b');
    await until(() => seen<TaskUpdate>(EVENT_CHANNELS.task, (u) => u.type === 'node' && u.taskId === b && u.node.name === 'local-coder-0') !== undefined, "task B's admitted node");
    await until(() => seen<PendingApproval>(EVENT_CHANNELS.approval, (p) => p.commandOrPath === 'echo b') !== undefined, 'the approval of echo b');
    const approval = seen<PendingApproval>(EVENT_CHANNELS.approval, (p) => p.commandOrPath === 'echo b')!;
    assert.equal(approval.asker.agent, 'local-coder-0');
    assert.equal(approval.taskId, b, 'shown under the task whose agent the broker admitted, not the one whose worker named it');
    const entries = (taskId: string): string[] =>
      events.flatMap((e) => (e.channel === EVENT_CHANNELS.task && (e.payload as TaskUpdate).type === 'entry' && (e.payload as TaskUpdate & { type: 'entry' }).taskId === taskId ? [(e.payload as TaskUpdate & { type: 'entry' }).entry.text] : []));
    assert.ok(entries(b).includes('asks to exec echo b'), JSON.stringify(entries(b)));
    assert.ok(!entries(a).includes('asks to exec echo b'), JSON.stringify(entries(a)));
    await host.handle(INVOKE_CHANNELS.answerApproval, top, { requestId: approval.requestId, verdict: 'denied' });
    await host.handle(INVOKE_CHANNELS.cancelTask, top, { taskId: a });
  } finally {
    host.close();
  }
});
