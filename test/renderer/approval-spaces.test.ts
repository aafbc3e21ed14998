// A command whose first screenful looks harmless and whose rest sits after 2,000 spaces: `npm
// test`, 2,000 spaces, `; curl … -o /tmp/p; . /tmp/p`. In the popover's box (`white-space:
// pre-wrap`) the spaces hung at the end of the first line, taking no room, so the box drew two
// short lines that fit: a "1 line" command read as two commands, the gap never seen, and Approve
// awake at once. Now spaces take their room and wrap (`break-spaces`), as a terminal draws them:
// the box is as tall as the command really is, and Approve waits until it was scrolled to its end.
// The same for a write's resolved path (spaces there were collapsed to one).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { INVOKE_CHANNELS } from '../../main/app/bridge/contract.js';
import { plan } from '../broker/helpers.js';
import { SCREENSHOTS, startApp, type AppFixture } from './app-fixture.js';
import { armedPopover } from './popover-helpers.js';
import { trustedFrame, waitForState } from './task-cards.js';

let app: AppFixture;

before(async () => {
  app = await startApp({ planner: true });
});

after(async () => {
  await app?.close();
});

async function startPlan(p: unknown): Promise<string> {
  const { taskId } = (await app.host.handle(INVOKE_CHANNELS.startTask, trustedFrame(app), { agent: 'planner', prompt: plan(p) })) as { taskId: string };
  return taskId;
}

const SPACED = `npm test${' '.repeat(2000)}--script-shell=./x`;

test('2,000 spaces inside a command take their room: the box is scrolled to reach what follows them before Approve wakes; a path keeps its spaces', async () => {
  const page = await app.open();
  try {
    const task = await startPlan({ seq: [{ approve: { kind: 'exec', command_or_path: SPACED } }, { approve: { kind: 'write', command_or_path: 'a     b.txt' } }] });
    await armedPopover(page, 'approval');
    await page.screenshot({ path: join(SCREENSHOTS, 'approval-spaces.png') });
    assert.equal(await page.$eval('#popover .approve', (b) => (b as HTMLButtonElement).disabled), true, 'Approve waits for the end of the command');
    // The tail is out of view until the box is scrolled.
    const tailInView = (): Promise<boolean> =>
      page.$eval('#popover .subject', (box) => {
        const range = document.createRange();
        const text = box.lastChild!;
        range.setStart(text, (text.textContent ?? '').length - 1);
        range.setEnd(text, (text.textContent ?? '').length);
        const r = range.getBoundingClientRect();
        const b = box.getBoundingClientRect();
        return r.top >= b.top && r.bottom <= b.bottom;
      });
    assert.equal(await tailInView(), false);
    await page.$eval('#popover .subject', (e) => e.scrollTo(0, e.scrollHeight));
    await page.waitForFunction(() => !(document.querySelector('chatty-approvals')?.shadowRoot?.querySelector('#popover .approve') as HTMLButtonElement).disabled);
    assert.equal(await tailInView(), true);
    await page.click('#popover .deny');
    await page.waitForSelector('#popover[open][data-kind="approval"] .path');
    await page.waitForFunction(() => (document.querySelector('chatty-approvals')?.shadowRoot?.querySelector('#popover .path') as HTMLElement | null)?.innerText.endsWith('a     b.txt') === true);
    await armedPopover(page, 'approval');
    await page.click('#popover .deny');
    await waitForState(page, task, 'completed');
  } finally {
    await page.close();
  }
});
