// Two windows with a bridge each on one gateway: the root has one human at a time, the window
// attached last. When that window closes (or its bridge is detached), the approvals and questions
// go back to the window before it, still open, instead of being denied at once with nobody asked
// (before: `by: no-root` while the first window's page sat there). A real gateway, the broker
// tests' JSON-plan agent as a real child per task, stand-in webContents.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { attachDesktopBridge } from '../../main/app/index.js';
import type { PendingApproval, PendingGrant } from '../../main/app/bridge/contract.js';
import { PluginGrants } from '../../main/plugins/grants/index.js';
import { grantRequest } from '../helpers/grant-request.js';
import { plan } from '../broker/helpers.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { approvalShownOn, planGateway, windowAtPage } from './bridge-fixture.js';
import { StandInIpcMain } from './electron-stand-in/electron.js';

let gw: RunningGateway;
before(async () => {
  gw = await planGateway();
});
after(() => gw.close());

const ipc = new StandInIpcMain();

test('the window attached last is the human; when it closes, the window before it (still open) is asked again; detaching the last one hands it back too', async () => {
  const first = windowAtPage();
  const second = windowAtPage();
  const detachFirst = attachDesktopBridge(gw.gateway, first);
  assert.equal(await approvalShownOn(first, 'make one', { first }), 'first');
  const detachSecond = attachDesktopBridge(gw.gateway, second);
  assert.equal(await approvalShownOn(first, 'make two', { first, second }), 'second', 'the second window took the root over');
  second.destroy();
  assert.equal(await approvalShownOn(first, 'make three', { first }), 'first', 'the first window is the human again');
  detachSecond(); // after its window closed: nothing changes
  assert.equal(await approvalShownOn(first, 'make four', { first }), 'first');

  // Detaching (not closing) the last one hands the root back too.
  const third = windowAtPage();
  const detachThird = attachDesktopBridge(gw.gateway, third);
  assert.equal(await approvalShownOn(first, 'make five', { first, third }), 'third');
  detachThird();
  assert.equal(await approvalShownOn(first, 'make six', { first }), 'first');
  detachFirst();
});

test('closing a window that is not the human changes nothing: the last attached stays the human', async () => {
  const first = windowAtPage();
  const second = windowAtPage();
  const detachFirst = attachDesktopBridge(gw.gateway, first);
  const detachSecond = attachDesktopBridge(gw.gateway, second);
  first.destroy();
  assert.equal(await approvalShownOn(second, 'make seven', { second }), 'second');
  detachSecond();
  detachFirst();
});

test("a plugin's capability request waiting in the closed window goes back to the window before it, with the approvals", { timeout: 180_000 }, async () => {
  const desk = new PluginGrants();
  const first = windowAtPage();
  const second = windowAtPage();
  const detachFirst = attachDesktopBridge(gw.gateway, first, { grants: desk });
  attachDesktopBridge(gw.gateway, second, { grants: desk });
  const outcome = desk.ask(grantRequest());
  await second.sentOn<PendingGrant>('chatty:grant');
  second.destroy();
  // Before: it stayed with the closed window's bridge, shown nowhere, until the app quit.
  const shown = await first.sentOn<PendingGrant>('chatty:grant');
  assert.deepEqual(await ipc.invoke('chatty:answer-grant', first, first.mainFrame, { requestId: shown.requestId, decision: 'granted' }), { accepted: true });
  assert.equal(await outcome, 'granted');
  detachFirst();
});

test('an approval waiting in the human window when it closes is not handed over: denied by no-root though the window before it is open; the next one goes there', { timeout: 180_000 }, async () => {
  const first = windowAtPage();
  const second = windowAtPage();
  const detachFirst = attachDesktopBridge(gw.gateway, first);
  attachDesktopBridge(gw.gateway, second);
  const rows: string[] = [];
  let decided: () => void = () => {};
  const firstDecision = new Promise<void>((resolve) => (decided = resolve));
  const off = gw.gateway.approvals.onDecision((row) => {
    rows.push(`${row.command_or_path}: ${row.verdict} by ${row.by}`);
    decided();
  });
  await ipc.invoke('chatty:start-task', first, first.mainFrame, { agent: 'agent', prompt: plan({ approve: { kind: 'exec', command_or_path: 'make waiting' } }) });
  await second.sentOn<PendingApproval>('chatty:approval', (p) => p.commandOrPath === 'make waiting');
  second.destroy();
  await firstDecision;
  assert.deepEqual(rows, ['make waiting: denied by no-root'], 'docs/embedding.md, "Two windows": not handed over');
  assert.equal(first.sent.filter((s) => s.channel === 'chatty:approval').length, 0);
  assert.equal(await approvalShownOn(first, 'make after', { first }), 'first');
  off();
  detachFirst();
});

test("a window that is not the human can neither list nor answer the human window's approval, by its id", async () => {
  const first = windowAtPage();
  const second = windowAtPage();
  const detachFirst = attachDesktopBridge(gw.gateway, first);
  const detachSecond = attachDesktopBridge(gw.gateway, second);
  const command = 'make crossed';
  await ipc.invoke('chatty:start-task', first, first.mainFrame, { agent: 'agent', prompt: plan({ approve: { kind: 'exec', command_or_path: command } }) });
  const view = await second.sentOn<PendingApproval>('chatty:approval', (p) => p.commandOrPath === command);
  const snapshot = (await ipc.invoke('chatty:snapshot', first, first.mainFrame)) as { approvals: PendingApproval[] };
  assert.deepEqual(snapshot.approvals, [], "the first window's snapshot does not hold it");
  await assert.rejects(ipc.invoke('chatty:answer-approval', first, first.mainFrame, { requestId: view.requestId, verdict: 'approved' }), /no approval .* is waiting/);
  // Still the second window's to answer.
  await ipc.invoke('chatty:answer-approval', second, second.mainFrame, { requestId: view.requestId, verdict: 'denied' });
  detachSecond();
  detachFirst();
});

test('a bridge is not attached to a window already closed: it would take the root over and hold every approval where nobody can answer', async () => {
  const first = windowAtPage();
  const closed = windowAtPage();
  const detachFirst = attachDesktopBridge(gw.gateway, first);
  closed.destroy();
  assert.throws(() => attachDesktopBridge(gw.gateway, closed), /the webContents is destroyed/);
  assert.equal(await approvalShownOn(first, 'make after a late attach', { first }), 'first', 'the open window is still the human');
  detachFirst();
});
