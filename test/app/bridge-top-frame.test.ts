// 5499481 took the window away when `did-navigate` committed another URL than pageUrl. But the
// top frame stops being a page that can answer in other ways too (Electron's DidFinishNavigation
// fires `did-navigate` only for a committed, non-error, cross-document navigation): a
// same-document navigation (a hash router, pushState: `did-navigate-in-page`), a failed load of
// another URL (an error page: `did-fail-load`), a 404 at pageUrl itself. Each left the window the
// root's human, approvals sent to a page whose calls are refused (or with no script at all). Now
// the top frame is judged in one place (its URL, its status) on each of those events.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { attachDesktopBridge, DEFAULT_PAGE_URL } from '../../main/app/index.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { StandInEvent, type StandInWebContents } from './electron-stand-in/electron.js';
import { approvalShownOn, planGateway, windowAtPage } from './bridge-fixture.js';

let gw: RunningGateway;
before(async () => {
  gw = await planGateway();
});
after(() => gw.close());

/** Two windows at the page; `second` (the newest, the root's human) then does `leave`: where is the next approval shown? */
async function shownAfter(leave: (second: StandInWebContents) => void, command: string): Promise<string> {
  const first = windowAtPage();
  const second = windowAtPage();
  const detachFirst = attachDesktopBridge(gw.gateway, first);
  const detachSecond = attachDesktopBridge(gw.gateway, second);
  try {
    leave(second);
    return await approvalShownOn(first, command, { first, second });
  } finally {
    detachSecond();
    detachFirst();
  }
}

function inPage(contents: StandInWebContents, url: string, isMainFrame = true): void {
  contents.mainFrame.url = url;
  contents.emit('did-navigate-in-page', new StandInEvent(), url, isMainFrame, 1, 1);
}

test('a same-document navigation of the top frame (hash router, pushState) hands the root back as leaving the page does', { timeout: 60_000 }, async () => {
  assert.equal(await shownAfter((second) => inPage(second, `${DEFAULT_PAGE_URL}#/settings`), 'make in-page'), 'first');
});

test('a same-document navigation back to pageUrl gives the window back; a sub-frame\'s changes nothing', { timeout: 60_000 }, async () => {
  assert.equal(await shownAfter((second) => {
    inPage(second, `${DEFAULT_PAGE_URL}#/settings`);
    inPage(second, DEFAULT_PAGE_URL);
  }, 'make in-page-back'), 'second');
  assert.equal(await shownAfter((second) => second.emit('did-navigate-in-page', new StandInEvent(), 'app://chatty/frame.html#x', false, 1, 2), 'make sub-frame'), 'second');
});

test('a failed load of another URL (an error page committed, did-fail-load only) hands the root back; a cancelled one (ERR_ABORTED) does not', { timeout: 60_000 }, async () => {
  assert.equal(await shownAfter((second) => {
    second.mainFrame.url = 'app://chatty/settings.html';
    second.emit('did-fail-load', new StandInEvent(), -6, 'ERR_FILE_NOT_FOUND', 'app://chatty/settings.html', true, 1, 1);
  }, 'make failed-load'), 'first');
  assert.equal(await shownAfter((second) => {
    second.emit('did-fail-load', new StandInEvent(), -3, 'ERR_ABORTED', 'https://example.com/', true, 1, 1);
  }, 'make aborted-load'), 'second');
});

test('the page committed as an error status (a 404 at pageUrl) is no page to ask; a 200 there gives it back', { timeout: 60_000 }, async () => {
  assert.equal(await shownAfter((second) => second.emit('did-navigate', new StandInEvent(), DEFAULT_PAGE_URL, 404, 'Not Found'), 'make page-404'), 'first');
  assert.equal(await shownAfter((second) => {
    second.emit('did-navigate', new StandInEvent(), DEFAULT_PAGE_URL, 404, 'Not Found');
    second.reload();
  }, 'make page-back'), 'second');
});
