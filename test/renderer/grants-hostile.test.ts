// A hostile plugin's capability request in <chatty-approvals> (issue 20 item 3), in Debian
// Chromium on the built page with the real bridge host and grant desk: a manifest's version is
// the author's words and unbounded, and a plugin may ask for thousands of hosts. What a person
// sees on open, before scrolling anything, must still say whose build it is (the short digest)
// and how much it asks for, with the buttons in view.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { CapabilityAsk } from '../../main/plugins/grants/index.js';
import { grantRequest } from '../helpers/grant-request.js';
import { startApp, type AppFixture } from './app-fixture.js';
import { armedPopover } from './popover-helpers.js';

let app: AppFixture;

before(async () => {
  app = await startApp();
});

after(async () => {
  await app?.close();
});

/** Whether the element matching `selector` in the popover is on screen and not scrolled out of its box. */
function inView(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((s) => {
    const root = document.querySelector('chatty-approvals')!.shadowRoot!;
    const node = root.querySelector(s);
    if (!node) return false;
    const box = node.getBoundingClientRect();
    if (box.width === 0 || box.height === 0 || box.top < 0 || box.bottom > window.innerHeight) return false;
    // Not clipped by a scrolling ancestor (the body, the head).
    for (let up = node.parentElement; up; up = up.parentElement) {
      const clip = up.getBoundingClientRect();
      if (getComputedStyle(up).overflowY !== 'visible' && (box.top < clip.top - 1 || box.bottom > clip.bottom + 1)) return false;
    }
    return true;
  }, selector);
}

describe('a hostile grant request in the popover (Chromium, real bridge host and grant desk)', () => {
  test('a very long version and thousands of asks: the short digest, the count of asks, the whole digest and the Grant button are all in view on open', async () => {
    const page = await app.open();
    try {
      const asks: CapabilityAsk[] = [{ capability: 'file', detail: 'read files under ./data' }];
      for (let i = 0; i < 2000; i++) asks.push({ capability: 'network', detail: `h${i}.example.org:443` });
      const loaded = new AbortController();
      void app.grants.ask(grantRequest({ version: `0.3.1-${'x'.repeat(6000)}`, asks }), loaded.signal);
      await armedPopover(page, 'grant');
      assert.ok(await inView(page, '#popover .digest-short'), 'the short digest after the version is in view');
      assert.ok(await inView(page, '#popover .digest'), 'the whole digest is in view without scrolling');
      assert.ok(await inView(page, '#popover .grant'), 'the Grant button is in view');
      const desc = await page.textContent('chatty-approvals >> #popover-desc');
      assert.match(desc ?? '', /asks for 2,001 things/, 'the line under the title says how many asks there are');
      const version = await page.textContent('chatty-approvals >> #popover-desc');
      assert.match(version ?? '', /^text-tools ⟦0\.3\.1-x+⟧ \(sha256:ab12cd34ef56…\)/, 'a version that is not a plain token is bounded by ⟦ ⟧');
      loaded.abort();
    } finally {
      await page.close();
    }
  });

  test('a network ask says what it reaches (a "*." entry any name under it, not the name itself; no port, 80 and 443 only), and the folder its ./ is in is shown', async () => {
    const page = await app.open();
    try {
      const loaded = new AbortController();
      const asks: CapabilityAsk[] = [
        { capability: 'network', detail: '*.example.org' },
        { capability: 'network', detail: 'api.example.com' },
        { capability: 'network', detail: 'api.github.com:443' },
      ];
      void app.grants.ask(grantRequest({ asks, dir: '/home/me/plugins/text-tools' }), loaded.signal);
      await armedPopover(page, 'grant');
      assert.deepEqual(await page.$$eval('chatty-approvals >> #popover .asks li', (lis) => lis.map((li) => li.textContent)), [
        'Network: *.example.org (any name under example.org, not example.org itself; ports 80 and 443 only)',
        'Network: api.example.com (ports 80 and 443 only)',
        'Network: api.github.com:443',
      ]);
      assert.equal(await page.textContent('chatty-approvals >> #popover .facts .folder'), '/home/me/plugins/text-tools', 'the folder its ./ is in');
      loaded.abort();
    } finally {
      await page.close();
    }
  });
});
