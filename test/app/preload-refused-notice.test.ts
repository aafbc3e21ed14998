// A page refused because its preload copy was changed (61a8f5d: every bridge judges its page at
// once) learnt it only at its next call when nothing waited in it: the withdrawals were the only
// word it got, and the person saw nothing. Now the bridge sends the page `chatty:refused` with the
// reason, once a document, and <chatty-approvals> shows it on its trace line. Real Chromium with
// the built preload and popover; only ipcRenderer/contextBridge (the loopback) and the window's
// webContents (the stand-in) are stood in.
import assert from 'node:assert/strict';
import { chmodSync, linkSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { attachDesktopBridge, preloadCopy } from '../../main/app/index.js';
import type { ChattyBridge } from '../../main/app/bridge/contract.js';
import { installPreload, launchChromium, serveDemo } from '../helpers/renderer-page.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { gatewayWithWorkspace, windowAtPage } from './bridge-fixture.js';
import { StandInIpcMain } from './electron-stand-in/electron.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-refused-notice-')));
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
  rmSync(scratch, { recursive: true, force: true });
});

test("a page refused for its preload copy with nothing waiting in it is told why (chatty:refused, once), and the popover shows it", { timeout: 180_000 }, async () => {
  const copy = preloadCopy(join(scratch, 'user-data'));
  const contents = windowAtPage();
  const other = windowAtPage(); // the app's second window, bridged too
  const detach = attachDesktopBridge(gw.gateway, contents);
  const detachOther = attachDesktopBridge(gw.gateway, other);
  const page = await browser.newPage();
  try {
    const { emit } = await installPreload(page, { handle: (channel, _sender, payload) => new StandInIpcMain().invoke(channel, contents, contents.mainFrame, payload) });
    contents.onSend = (channel, payload) => void emit(channel, payload).catch(() => {});
    await page.goto(`${demo.base}/renderer-demo/index.html`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.evaluate(() => {
      const w = window as unknown as { chatty: ChattyBridge; refusals: string[] };
      w.refusals = [];
      w.chatty.onRefused((r) => w.refusals.push(r.reason));
    });
    // The agent's approved ln, chmod and write of the copy; the other window's call finds it.
    const notes = join(gw.gateway.broker.workspaceRoot!, 'notes.cjs');
    linkSync(copy, notes);
    chmodSync(notes, 0o600);
    writeFileSync(notes, '/* the agent\'s */');
    await new StandInIpcMain().invoke('chatty:snapshot', other, other.mainFrame).catch(() => {});
    const sent = contents.sent.filter((s) => s.channel === 'chatty:refused');
    assert.equal(sent.length, 1, 'the page is told, with nothing waiting in it');
    assert.match((sent[0]!.payload as { reason: string }).reason, /^the window's preload copy .* was changed by someone else after this page's copy was renewed .*: the page may run their script, so it is answered no more\. Reload the window/);
    // Seen in the page and by the person, on the popover's trace line.
    await page.locator('chatty-approvals #trace', { hasText: 'this window is answered no more: the window\'s preload copy' }).waitFor({ state: 'visible' });
    // Its next call is refused, saying the same; and it is not told again for this document.
    await assert.rejects(page.evaluate(() => (window as unknown as { chatty: ChattyBridge }).chatty.snapshot()), /refused chatty:snapshot: the window's preload copy/);
    assert.equal(contents.sent.filter((s) => s.channel === 'chatty:refused').length, 1);
    assert.deepEqual(await page.evaluate(() => (window as unknown as { refusals: string[] }).refusals.length), 1);
  } finally {
    await page.close();
    detachOther();
    detach();
  }
});
