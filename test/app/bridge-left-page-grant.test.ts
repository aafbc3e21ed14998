// A window whose top frame left its page by a same-document navigation (a hash router's
// '#/settings', then history.pushState back) while a plugin's capability request waited in its
// popover. The desk took the request back when the window left (it is nobody to ask there) and
// handed it again, under a new id, when the page was back; but the page was never told the first
// was withdrawn (the host forgot its window before giving up the desk): the same document showed
// the request twice, the stale popover first, and its Grant was refused ("no capability request
// grant-N is waiting"), the error standing in the popover. Now the page is told (chatty:withdrawn,
// saying why) before the desk takes it back, as an approval waiting there is. Real Chromium with
// the built preload and popover; only ipcRenderer/contextBridge (the loopback) and the window's
// webContents (the stand-in, its top frame's URL and events following the page's) are stood in.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import type { PendingGrant, Withdrawn } from '../../main/app/bridge/contract.js';
import { attachDesktopBridge, DEFAULT_PAGE_URL } from '../../main/app/index.js';
import { PluginGrants } from '../../main/plugins/grants/index.js';
import { installPreload, launchChromium, serveDemo } from '../helpers/renderer-page.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { grantRequest } from '../helpers/grant-request.js';
import { armedPopover, setGuard } from '../renderer/popover-helpers.js';
import { gatewayWithWorkspace, windowAtPage } from './bridge-fixture.js';
import { StandInEvent, StandInIpcMain } from './electron-stand-in/electron.js';

let gw: RunningGateway;
let browser: Browser;
let demo: Awaited<ReturnType<typeof serveDemo>>;
before(async () => {
  [gw, browser, demo] = await Promise.all([gatewayWithWorkspace(), launchChromium(), serveDemo()]);
});
after(async () => {
  await browser.close();
  demo.server.close();
  await gw.close();
});

test("a capability request waiting in a page that goes to another route of its document and back is withdrawn there, then shown once under its new id, and its Grant reaches the desk", { timeout: 120_000 }, async () => {
  const desk = new PluginGrants();
  const contents = windowAtPage();
  const detach = attachDesktopBridge(gw.gateway, contents, { grants: desk });
  const page = await browser.newPage();
  try {
    const { emit } = await installPreload(page, { handle: (channel, _sender, payload) => new StandInIpcMain().invoke(channel, contents, contents.mainFrame, payload) });
    contents.onSend = (channel, payload) => void emit(channel, payload).catch(() => {});
    await page.goto(`${demo.base}/renderer-demo/index.html`);
    await page.waitForSelector('body[data-ready="true"]');
    await setGuard(page, 0);
    const outcome = desk.ask(grantRequest());
    const first = await contents.sentOn<PendingGrant>('chatty:grant');
    await armedPopover(page, 'grant');
    // The app's router, in the page and as Electron reports it (did-navigate-in-page, the top frame).
    const route = async (move: string, url: string): Promise<void> => {
      await page.evaluate(move);
      contents.mainFrame.url = url;
      contents.emit('did-navigate-in-page', new StandInEvent(), url, true);
    };
    await route("location.hash = '#/settings'", `${DEFAULT_PAGE_URL}#/settings`);
    const withdrawn = contents.sent.filter((s) => s.channel === 'chatty:withdrawn').map((s) => s.payload as Withdrawn);
    assert.deepEqual(withdrawn, [{ requestId: first.requestId, reason: `the window left its page for ${DEFAULT_PAGE_URL}#/settings` }], 'the page is told, as of an approval');
    await route("history.pushState(null, '', location.pathname)", DEFAULT_PAGE_URL);
    const grants = contents.sent.filter((s) => s.channel === 'chatty:grant').map((s) => (s.payload as PendingGrant).requestId);
    assert.equal(grants.length, 2, 'handed to the page again');
    const again = grants[1]!;
    await page.waitForSelector(`#popover[open][data-kind="grant"][data-request-id="${again}"][data-armed="true"]`);
    assert.equal(await page.evaluate(() => (document.querySelector('chatty-approvals') as unknown as { waiting: number }).waiting), 1, 'one popover for the one request');
    await page.click('#popover .grant');
    assert.equal(await outcome, 'granted');
  } finally {
    await page.close();
    detach();
  }
});
