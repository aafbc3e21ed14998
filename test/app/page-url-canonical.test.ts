// The bridge compares the URL the top frame committed with pageUrl exactly. A pageUrl Chromium
// commits under another spelling (`app://chatty` as `app://chatty/`, `./` and `../` resolved) was
// accepted, and since the window leaving its page counts as a crash (5499481) every approval was
// then denied at once, the window having "left its page" at its first load. Now it is refused at
// attach, saying how to write it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { attachDesktopBridge } from '../../main/app/index.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { planGateway, windowAtPage } from './bridge-fixture.js';

let gw: RunningGateway;
before(async () => {
  gw = await planGateway();
});
after(() => gw.close());

test('a pageUrl Chromium would commit under another spelling is refused at attach', () => {
  for (const pageUrl of ['app://chatty', 'app://chatty/./index.html', 'app://chatty/x/../index.html', 'app://chatty//index.html', 'app://chatty/index.html#top', 'app://chatty/a%2fb.html', 'app://chatty/a b.html']) {
    assert.throws(() => attachDesktopBridge(gw.gateway, windowAtPage(), { pageUrl }), /pageUrl .* is not written as Chromium will commit it: .* like app:\/\/chatty\/index\.html/, pageUrl);
  }
});

test('a pageUrl written as Chromium commits it is accepted', () => {
  for (const pageUrl of ['app://chatty/', 'app://chatty/index.html', 'app://chatty/renderer-demo/index.html', 'app://chatty/index.html?view=approvals']) {
    attachDesktopBridge(gw.gateway, windowAtPage(), { pageUrl })();
  }
});
