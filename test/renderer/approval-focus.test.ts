// Focus coming back to the window: any process of the user (a worker among them) can launch the app
// again, and the running window comes forward and takes the focus (`second-instance`). A person
// typing in another program when that happens sends their keys to the popover. It kept the focus
// where it was, armed, so with the focus left on Approve (tabbed to, then the person looked
// elsewhere) a Space or an Enter meant for the other program approved. Now the window taking the
// focus back puts it on the popover's title and re-arms the guard time. In Chromium (two pages,
// each brought to the front in turn), on the built page with the real preload, bridge host,
// gateway, broker and the broker tests' JSON-plan agent.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { INVOKE_CHANNELS } from '../../main/app/bridge/contract.js';
import { plan } from '../broker/helpers.js';
import { startApp, type AppFixture } from './app-fixture.js';
import { armedPopover, deepFocused, focusMatches, popoverOpen, tabTo } from './popover-helpers.js';
import { hostSnapshot, outputs, trustedFrame, waitForState } from './task-cards.js';
import { bindWindow } from '../helpers/renderer-page.js';

let app: AppFixture;

before(async () => {
  app = await startApp({ planner: true });
});

after(async () => {
  await app?.close();
});

test('the window taking the focus back re-arms the popover and moves the focus off its buttons: a key meant for another program answers nothing', async () => {
  // The app's page and another page of the same browser (standing for the other program), with
  // real window focus: each loses it to the other and gets it back (Playwright otherwise tells
  // every page it has the focus).
  const context = await app.browser.newContext({ viewport: { width: 800, height: 600 } });
  const page = await context.newPage();
  await bindWindow(page, app.host);
  await page.goto(app.pageUrl);
  await page.waitForSelector('body[data-ready="true"]');
  const other = await context.newPage();
  for (const p of [page, other]) await (await context.newCDPSession(p)).send('Emulation.setFocusEmulationEnabled', { enabled: false });
  await page.bringToFront();
  try {
    const { taskId } = (await app.host.handle(INVOKE_CHANNELS.startTask, trustedFrame(app), { agent: 'planner', prompt: plan({ approve: { kind: 'exec', command_or_path: 'make publish' } }) })) as { taskId: string };
    await armedPopover(page, 'approval');
    await tabTo(page, '.approve');
    // Each change of the guard, recorded as it happens: reading `data-armed` after the focus came
    // back raced the 600 ms guard on a loaded machine (the page's turn came after it had run out).
    await page.evaluate(() => {
      const marks: string[] = [];
      (window as unknown as { armedMarks: string[] }).armedMarks = marks;
      const popover = document.querySelector('chatty-approvals')!.shadowRoot!.querySelector('#popover') as HTMLElement;
      new MutationObserver(() => marks.push(popover.dataset['armed'] ?? '')).observe(popover, { attributes: true, attributeFilter: ['data-armed'] });
    });
    // The person goes to another program…
    await other.bringToFront();
    await page.waitForFunction(() => !document.hasFocus());
    // …and the window is brought forward while they type there.
    await page.bringToFront();
    await page.waitForFunction(() => document.hasFocus());
    const marks = await page.evaluate(() => (window as unknown as { armedMarks: string[] }).armedMarks);
    assert.equal(marks[0], 'false', `the guard time again (the guard's changes since the popover was armed: ${JSON.stringify(marks)})`);
    assert.equal(await focusMatches(page, '#popover-title'), true, `the focus is on the title, not on ${await deepFocused(page)}`);
    await page.keyboard.press('Space');
    await page.keyboard.press('Enter');
    await armedPopover(page, 'approval');
    await page.keyboard.press('Enter');
    assert.equal(await popoverOpen(page), true);
    assert.deepEqual((await hostSnapshot(app)).approvals.map((a) => a.commandOrPath), ['make publish'], 'still waiting in main');
    await page.click('#popover .deny');
    await waitForState(page, taskId, 'completed');
    assert.deepEqual(await outputs(page, taskId), ['["denied"]']);
  } finally {
    await context.close();
  }
});
