// A window whose top frame is no longer at the bridge's page (the app loaded another page of its
// own in it: a settings page, an error page after a crash) cannot answer: the bridge refuses every
// call from any other URL. Before, the approvals kept being sent there and waited unseen, the
// window before it no longer asked; now the window is nobody to ask until its page is back, as
// after a crash. A real gateway, the JSON-plan agent as a real child per task, stand-in windows.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { attachDesktopBridge } from '../../main/app/index.js';
import type { PendingApproval } from '../../main/app/bridge/contract.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { approvalShownOn, planGateway, windowAtPage } from './bridge-fixture.js';

let gw: RunningGateway;
before(async () => {
  gw = await planGateway();
});
after(() => gw.close());

test("a window that left the bridge's page hands the root to the window before it until the page is loaded again", { timeout: 20_000 }, async () => {
  const first = windowAtPage();
  const second = windowAtPage();
  const detachFirst = attachDesktopBridge(gw.gateway, first);
  const detachSecond = attachDesktopBridge(gw.gateway, second);
  const page = second.mainFrame.url;
  second.navigate('app://chatty/settings.html');
  // Before: sent to the settings page, whose answer the bridge refuses (not its page).
  assert.equal(await approvalShownOn(first, 'make while-away', { first, second }), 'first');
  assert.equal(second.sent.filter((s) => s.channel === 'chatty:approval' && (s.payload as PendingApproval).commandOrPath === 'make while-away').length, 0);
  second.navigate(page);
  assert.equal(await approvalShownOn(first, 'make page-back', { first, second }), 'second', 'the page is back: the newest window is the human again');
  detachSecond();
  detachFirst();
});

test("a window attached while its top frame is not at the page (a hash route, another page of the app) is nobody to ask until the page is loaded: the window before it is asked", { timeout: 20_000 }, async () => {
  // The attach judged only the preload (083a482): the window was made the human wherever its top
  // frame was, and the approval waited there, its answers refused (the sender not at the page).
  const first = windowAtPage();
  const second = windowAtPage();
  const page = second.mainFrame.url;
  second.mainFrame.url = `${page}#/settings`;
  const detachFirst = attachDesktopBridge(gw.gateway, first);
  const detachSecond = attachDesktopBridge(gw.gateway, second);
  try {
    assert.equal(await approvalShownOn(first, 'make attached-away', { first, second }), 'first');
    assert.equal(second.sent.filter((s) => s.channel === 'chatty:approval').length, 0, 'nothing sent to a window not at its page');
    second.navigate(page);
    assert.equal(await approvalShownOn(first, 'make attached-page-back', { first, second }), 'second', 'at its page: the newest window is the human');
  } finally {
    detachSecond();
    detachFirst();
  }
});
