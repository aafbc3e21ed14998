// A plugin's capability request in <chatty-approvals> (issue 20 item 3), in Debian Chromium, on the
// built page with the real preload and bridge host, the fixture registry's real grant desk
// (`registry.grants`): shown as its own kind of popover, exactly; the guard; grant and deny reach
// the desk; a refused answer keeps it; a withdrawn one goes; a reloaded page finds it again.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { INVOKE_CHANNELS } from '../../main/app/bridge/contract.js';
import type { GrantOutcome, PluginGrantRequest } from '../../main/plugins/grants/index.js';
import { GRANT_DIGEST, grantRequest } from '../helpers/grant-request.js';
import { SCREENSHOTS, seriousViolations, startApp, type AppFixture } from './app-fixture.js';
import { armedPopover, deepFocused, popoverClosed, setGuard, waitingIs } from './popover-helpers.js';
import { trustedFrame } from './task-cards.js';

let app: AppFixture;

before(async () => {
  app = await startApp();
});

after(async () => {
  await app?.close();
});

/** Puts a request to the desk as the registry does on load; `unload` withdraws it. */
function ask(request: Partial<Omit<PluginGrantRequest, 'id'>> = {}): { outcome: Promise<GrantOutcome>; unload: () => void } {
  const loaded = new AbortController();
  return { outcome: app.grants.ask(grantRequest(request), loaded.signal), unload: () => loaded.abort() };
}

/** The plugins whose requests still wait at the desk. */
const waitingPlugins = (): string[] => app.grants.waiting().map((r) => r.plugin);

/** Waits until the popover shows plugin `name`'s request. */
async function showsPlugin(page: Page, name: string): Promise<void> {
  await page.waitForFunction((n) => (document.querySelector('chatty-approvals')?.shadowRoot?.getElementById('popover-desc')?.textContent ?? '').startsWith(`${n} `), name);
}

/** What the grant popover shows: its title, the line under it, each ask, the facts. */
function shownGrant(page: Page) {
  return page.$eval('#popover', (dialog) => ({
    kind: (dialog as HTMLElement).dataset['kind'],
    hidden: (dialog as HTMLElement).dataset['hidden'],
    title: dialog.querySelector('#popover-title')?.textContent,
    desc: dialog.querySelector('#popover-desc')?.textContent,
    asks: [...dialog.querySelectorAll('.asks li')].map((li) => li.textContent),
    capabilities: [...dialog.querySelectorAll('.asks li')].map((li) => (li as HTMLElement).dataset['capability']),
    facts: [...dialog.querySelectorAll('.facts dt')].map((dt) => [dt.textContent, dt.nextElementSibling?.textContent]),
    buttons: [...dialog.querySelectorAll('.actions-slot button')].map((b) => b.textContent),
  }));
}

describe('the grant popover (Chromium, real bridge host and grant desk)', () => {
  test('a capability request is its own kind of popover: the plugin, version, short and whole digest, one ask a line; Grant reaches the desk', async () => {
    const page = await app.open();
    try {
      const { outcome } = ask();
      await armedPopover(page, 'grant');
      assert.deepEqual(await shownGrant(page), {
        kind: 'grant',
        hidden: 'false',
        title: 'Grant this plugin what it asks for?',
        desc: 'text-tools 0.3.1 (sha256:ab12cd34ef56…) asks for:',
        asks: ['Files: read files under ~/notes', 'Network: api.github.com:443'],
        capabilities: ['file', 'network'],
        facts: [
          ['Plugin', 'text-tools'],
          ['Version', '0.3.1'],
          ['Digest', GRANT_DIGEST],
        ],
        buttons: ['Later', 'Deny', 'Grant'],
      });
      assert.equal(await deepFocused(page), 'popover-title', 'no button has the focus');
      assert.deepEqual(await seriousViolations(page), []);
      await page.screenshot({ path: join(SCREENSHOTS, 'plugin-grant.png') });
      await page.click('#popover .grant');
      assert.equal(await outcome, 'granted');
      await popoverClosed(page);
      assert.match((await page.textContent('chatty-approvals >> #trace')) ?? '', /granted: plugin text-tools 0\.3\.1 \(sha256:ab12cd34ef56…\): file: read files under ~\/notes; network: api\.github\.com:443/);
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('every field is shown exactly: hidden and right-to-left characters as code points, flagged with a warning; Deny reaches the desk', async () => {
    const page = await app.open();
    try {
      const { outcome } = ask({ plugin: 'text\u200Btools', version: '0.3.1\u202E', asks: [{ capability: 'network', detail: 'api.github.com\u202E344:' }, { capability: 'file', detail: 'read files under ./data\nand ~/.ssh' }] });
      await armedPopover(page, 'grant');
      const shown = await shownGrant(page);
      assert.equal(shown.hidden, 'true');
      assert.equal(shown.desc, 'text<U+200B>tools ⟦0.3.1<U+202E>⟧ (sha256:ab12cd34ef56…) asks for:', 'a version that is not a plain token is bounded by ⟦ ⟧');
      assert.deepEqual(shown.asks, ['Network: api.github.com<U+202E>344:', 'Files: read files under ./data\nand ~/.ssh']);
      assert.equal(await page.isVisible('#popover .hidden-warning'), true);
      // Each label stands apart from the same letters typed by the plugin: a marked span.
      assert.deepEqual(await page.$$eval('#popover .asks .cp', (spans) => spans.map((s) => s.textContent)), ['<U+202E>']);
      const text = await page.$eval('#popover', (d) => d.textContent ?? '');
      assert.ok(!text.includes('\u202E') && !text.includes('\u200B'), 'the characters themselves never reach the page');
      await page.screenshot({ path: join(SCREENSHOTS, 'plugin-grant-hidden.png') });
      await page.click('#popover .deny');
      assert.equal(await outcome, 'denied');
      await popoverClosed(page);
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('the guard: a double click on Grant answers one request; the next is inert for its guard time, keys included', async () => {
    const page = await app.open();
    try {
      const first = ask({ plugin: 'first-plugin' });
      const second = ask({ plugin: 'second-plugin' });
      await waitingIs(page, '2 waiting');
      await armedPopover(page, 'grant');
      assert.match((await shownGrant(page)).desc ?? '', /^first-plugin /);
      // A guard long enough that the clicks below surely fall inside it on a loaded machine.
      await setGuard(page, 5_000);
      const at = (await (await page.$('#popover .grant'))!.boundingBox())!;
      await page.mouse.dblclick(at.x + at.width / 2, at.y + at.height / 2);
      assert.equal(await first.outcome, 'granted');
      await showsPlugin(page, 'second-plugin');
      assert.equal(await page.getAttribute('#popover', 'data-armed'), 'false');
      assert.equal(await page.isVisible('#popover .guard'), true, 'the cue shows while inert');
      await page.mouse.click(at.x + at.width / 2, at.y + at.height / 2);
      await page.keyboard.press('Enter');
      await page.keyboard.press('Space');
      assert.deepEqual(waitingPlugins(), ['second-plugin'], 'the second still waits');
      await setGuard(page, 600);
      // A hang guard: a popover never armed waits for good; 30 s leaves a loaded machine's Chromium time.
      await page.waitForSelector('#popover[data-armed="true"]', { timeout: 30_000 });
      await page.click('#popover .deny');
      assert.equal(await second.outcome, 'denied');
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('keys typed for the task field when the popover arrives answer nothing', async () => {
    const page = await app.open();
    try {
      await page.click('#prompt');
      await page.keyboard.type('say hel');
      const { outcome } = ask({ plugin: 'typed-over' });
      await page.waitForSelector('#popover[open][data-kind="grant"]');
      await page.keyboard.type('lo there ');
      await page.keyboard.press('Enter');
      await armedPopover(page, 'grant');
      await page.keyboard.press('Space');
      await page.keyboard.press('Enter');
      assert.equal(await deepFocused(page), 'popover-title', 'no button took the focus');
      assert.deepEqual(waitingPlugins(), ['typed-over'], 'nothing was answered');
      await page.click('#popover .grant');
      assert.equal(await outcome, 'granted');
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('a refused answer keeps the popover with the error; a reloaded page finds a waiting request again; a withdrawn one closes, leaving a trace', async () => {
    const page = await app.open();
    try {
      // Answered elsewhere meanwhile (main's own call): the page's answer is refused, the popover stays, with why.
      const answered = ask({ plugin: 'answered-elsewhere' });
      await armedPopover(page, 'grant');
      const requestId = (await page.getAttribute('#popover', 'data-request-id'))!;
      await app.host.handle(INVOKE_CHANNELS.answerGrant, trustedFrame(app), { requestId, decision: 'denied' });
      assert.equal(await answered.outcome, 'denied');
      await page.click('#popover .grant');
      await page.waitForSelector('#popover .error:not([hidden])');
      assert.match((await page.textContent('#popover .error')) ?? '', new RegExp(`The answer was refused: .*no capability request ${requestId} is waiting`));
      assert.equal(await page.getAttribute('#popover', 'data-request-id'), requestId);
      await page.keyboard.press('Escape');
      await popoverClosed(page);

      const reloaded = ask({ plugin: 'kept-over-reload' });
      await showsPlugin(page, 'kept-over-reload');
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      await armedPopover(page, 'grant');
      assert.match((await shownGrant(page)).desc ?? '', /^kept-over-reload /, 'the reloaded page shows it again');

      const withdrawn = ask({ plugin: 'unloaded-meanwhile' });
      await waitingIs(page, '2 waiting');
      await page.click('#popover .grant');
      assert.equal(await reloaded.outcome, 'granted');
      await armedPopover(page, 'grant');
      withdrawn.unload();
      assert.equal(await withdrawn.outcome, 'withdrawn');
      await popoverClosed(page);
      assert.match((await page.textContent('chatty-approvals >> #trace')) ?? '', /withdrawn \(the plugin no longer waits for it\): plugin unloaded-meanwhile 0\.3\.1/);
      assert.deepEqual(
        app.problems(page).filter((p) => !/chatty:answer-grant/.test(p)),
        [],
      );
    } finally {
      await page.close();
    }
  });
});
