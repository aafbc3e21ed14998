/**
 * Who decided, as the desktop's audit rows say it. The bridge host denied an approval nobody saw
 * (no window open, or the page reloaded while it waited) by answering 'denied' itself, so
 * approvals.log said `by: human`: a person decided what no one read. Now those are `by: no-root`
 * (nobody answered), and only an answer from the page is `human`. A real gateway, the bridge host,
 * the broker tests' agent as a real child per task.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { EVENT_CHANNELS, INVOKE_CHANNELS, type AuditRow, type PendingApproval, type TaskUpdate } from '../../main/app/bridge/contract.js';
import { APPROVALS_LOG_FILE } from '../../main/broker/approvals/index.js';
import { plan, until } from '../broker/helpers.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { planGateway, recordingHost, top } from './bridge-fixture.js';

let gw: RunningGateway;

before(async () => {
  gw = await planGateway();
});

after(async () => {
  await gw?.close();
});

const fileRows = (): AuditRow[] =>
  readFileSync(join(gw.runtimeDir, APPROVALS_LOG_FILE), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as AuditRow);

test('an approval denied because no window showed it (none open, or the page reloaded) is by no-root in approvals.log; one the page answered is by human', async () => {
  const { host, events, attach, seen } = recordingHost(gw);
  const start = async (command: string): Promise<string> =>
    ((await host.handle(INVOKE_CHANNELS.startTask, top, { agent: 'agent', prompt: plan({ approve: { kind: 'exec', command_or_path: command } }) })) as { taskId: string }).taskId;
  const ended = (taskId: string) => (u: TaskUpdate) => u.type === 'ended' && u.taskId === taskId;
  try {
    // No window yet: denied at once, nobody shown it.
    await start('make unseen');
    await until(() => fileRows().some((r) => r.command_or_path === 'make unseen'), 'the row of make unseen');

    attach();
    const reloaded = await start('make reloaded');
    await until(() => seen<PendingApproval>(EVENT_CHANNELS.approval, (p) => p.commandOrPath === 'make reloaded') !== undefined, 'make reloaded shown');
    host.windowReset('the window was reloaded');
    await until(() => seen(EVENT_CHANNELS.task, ended(reloaded)) !== undefined, 'the reloaded task ended');

    const answered = await start('make answered');
    await until(() => seen<PendingApproval>(EVENT_CHANNELS.approval, (p) => p.commandOrPath === 'make answered') !== undefined, 'make answered shown');
    const view = seen<PendingApproval>(EVENT_CHANNELS.approval, (p) => p.commandOrPath === 'make answered')!;
    await host.handle(INVOKE_CHANNELS.answerApproval, top, { requestId: view.requestId, verdict: 'denied' });
    await until(() => seen(EVENT_CHANNELS.task, ended(answered)) !== undefined, 'the answered task ended');

    assert.deepEqual(
      fileRows().map((r) => [r.command_or_path, r.verdict, r.by]),
      [
        ['make unseen', 'denied', 'no-root'],
        ['make reloaded', 'denied', 'no-root'],
        ['make answered', 'denied', 'human'],
      ],
    );
    // The page's Logs tab gets the same rows.
    assert.deepEqual(
      events.filter((e) => e.channel === EVENT_CHANNELS.approvalDecision).map((e) => (e.payload as AuditRow).by),
      ['no-root', 'human'],
    );
  } finally {
    host.close();
  }
});
