// A page that crashed is nobody to ask. Before, the approvals asked after a crash were sent to the
// dead page and waited there, unseen, with nothing on screen; and the remedy docs/desktop.md gave
// (reload the page) denied them as "the window was reloaded". Now a crashed window is like a
// closed one until its page is loaded again: what is asked meanwhile goes to the window before it
// if one is open, else is denied at once (`by: no-root`, the asker told why); the reloaded page is
// the human again. A real gateway, the JSON-plan agent as a real child per task, stand-in windows.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { attachDesktopBridge } from '../../main/app/index.js';
import type { PendingApproval, PendingGrant, Snapshot } from '../../main/app/bridge/contract.js';
import { plan } from '../broker/helpers.js';
import { PluginGrants } from '../../main/plugins/grants/index.js';
import { grantRequest } from '../helpers/grant-request.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { approvalShownOn, planGateway, windowAtPage } from './bridge-fixture.js';
import { StandInIpcMain, type StandInWebContents } from './electron-stand-in/electron.js';

let gw: RunningGateway;
before(async () => {
  gw = await planGateway();
});
after(() => gw.close());
const ipc = new StandInIpcMain();

/**
 * Starts `exec <command>` while `window`'s page is dead (an MCP client's task or a subtask alike)
 * and resolves with the decision made on it, as `<verdict> by <by>`, and how many approvals were
 * sent to the window meanwhile.
 */
async function decidedWhileCrashed(window: StandInWebContents, command: string): Promise<{ decision: string; sentToWindow: number }> {
  const decided = new Promise<string>((resolve) => {
    const off = gw.gateway.approvals.onDecision((row) => {
      if (row.command_or_path !== command) return;
      off();
      resolve(`${row.verdict} by ${row.by}`);
    });
  });
  await ipc.invoke('chatty:start-task', window, window.mainFrame, { agent: 'agent', prompt: plan({ approve: { kind: 'exec', command_or_path: command } }) });
  const decision = await decided;
  return { decision, sentToWindow: window.sent.filter((s) => s.channel === 'chatty:approval' && (s.payload as PendingApproval).commandOrPath === command).length };
}

test('an approval asked after the page crashed is denied at once, not left waiting unseen; once the page is loaded again it is asked there', { timeout: 180_000 }, async () => {
  const window = windowAtPage();
  const detach = attachDesktopBridge(gw.gateway, window);
  window.crash();
  // Before: sent to the dead page, it waited there unseen (and the reload then denied it).
  assert.deepEqual(await decidedWhileCrashed(window, 'make after-crash'), { decision: 'denied by no-root', sentToWindow: 0 }, 'nobody was asked: nobody approved it either');
  window.reload();
  const snapshot = (await ipc.invoke('chatty:snapshot', window, window.mainFrame)) as Snapshot;
  assert.deepEqual(snapshot.auditRows.filter((r) => r.command_or_path === 'make after-crash').map((r) => r.by), ['no-root'], 'the reloaded page sees what was denied');
  assert.equal(await approvalShownOn(window, 'make after-reload', { window }), 'window', 'the reloaded page is the human again');
  detach();
});

test('with two windows, the crashed one hands the root to the one before it until its page is loaded again', { timeout: 180_000 }, async () => {
  const first = windowAtPage();
  const second = windowAtPage();
  const detachFirst = attachDesktopBridge(gw.gateway, first);
  const detachSecond = attachDesktopBridge(gw.gateway, second);
  second.crash();
  assert.equal(await approvalShownOn(first, 'make while crashed', { first, second }), 'first');
  second.reload();
  assert.equal(await approvalShownOn(first, 'make once reloaded', { first, second }), 'second');
  detachSecond();
  detachFirst();
});

test("a plugin's capability request outlives the crash: the reloaded page finds it in its snapshot and answers it", { timeout: 180_000 }, async () => {
  const desk = new PluginGrants();
  const window = windowAtPage();
  const detach = attachDesktopBridge(gw.gateway, window, { grants: desk });
  const outcome = desk.ask(grantRequest());
  await window.sentOn<PendingGrant>('chatty:grant');
  window.crash();
  window.reload();
  const snapshot = (await ipc.invoke('chatty:snapshot', window, window.mainFrame)) as Snapshot;
  assert.equal(snapshot.grants.length, 1);
  await ipc.invoke('chatty:answer-grant', window, window.mainFrame, { requestId: snapshot.grants[0]?.requestId, decision: 'granted' });
  assert.equal(await outcome, 'granted');
  detach();
});

test('a bridge attached to a webContents whose page had crashed already asks nobody there until it is loaded again', { timeout: 180_000 }, async () => {
  const window = windowAtPage();
  window.crash();
  const detach = attachDesktopBridge(gw.gateway, window);
  assert.deepEqual(await decidedWhileCrashed(window, 'make crashed before the attach'), { decision: 'denied by no-root', sentToWindow: 0 });
  window.reload();
  assert.equal(await approvalShownOn(window, 'make loaded', { window }), 'window');
  detach();
});
