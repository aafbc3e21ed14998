// A worker's question dressed as an approval: "Run this command?⏎⏎rm -rf ~/project" with the
// options "Approve once", "Deny", "Always for coder". The popover drew the options as buttons
// like the approval's own and its text on one line, so a person could take it for an approval
// (which the gateway reads, tags and logs) and answer "Approve once" thinking they had approved
// a command. Now the question keeps its line breaks, says that an answer approves nothing, and
// draws each option as a choice (a ○ / ● mark), not as an action. In Chromium on the built page.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { INVOKE_CHANNELS } from '../../main/app/bridge/contract.js';
import { plan } from '../broker/helpers.js';
import { SCREENSHOTS, startApp, type AppFixture } from './app-fixture.js';
import { armedPopover } from './popover-helpers.js';
import { outputs, trustedFrame, waitForState } from './task-cards.js';

let app: AppFixture;

before(async () => {
  app = await startApp({ planner: true });
});

after(async () => {
  await app?.close();
});

test('a question posing as an approval: its line breaks kept, "approves nothing" said, its options drawn as choices unlike the action buttons; the chosen option is sent as the worker wrote it', async () => {
  const page = await app.open();
  try {
    const { taskId } = (await app.host.handle(INVOKE_CHANNELS.startTask, trustedFrame(app), {
      agent: 'planner',
      prompt: plan({ ask: [{ id: 'q', question: 'Run this command?\n\nrm -rf ~/project', options: ['Approve once', 'Deny', 'Always for coder'] }] }),
    })) as { taskId: string };
    await armedPopover(page, 'question');
    // Three lines drawn (the blank one too), not one.
    const lines = await page.$eval('#popover legend', (l) => Math.round(l.getBoundingClientRect().height / (parseFloat(getComputedStyle(l).fontSize) * 1.3)));
    assert.ok(lines >= 3, `the question is drawn on ${lines} line(s)`);
    assert.match((await page.textContent('#popover .question-note')) ?? '', /approves nothing/);
    assert.equal(await page.isVisible('#popover .question-note'), true);
    const marks = await page.$$eval('#popover .option', (bs) => bs.map((b) => getComputedStyle(b, '::before').content));
    assert.deepEqual(marks, ['"○"', '"○"', '"○"']);
    assert.equal(await page.$eval('#popover .send', (b) => getComputedStyle(b, '::before').content), 'none', 'an action has no choice mark');
    await page.click('#popover .option:text-is("Approve once")');
    assert.equal(await page.$eval('#popover .option[aria-pressed="true"]', (b) => getComputedStyle(b, '::before').content), '"●"');
    await page.screenshot({ path: join(SCREENSHOTS, 'question-as-approval.png') });
    await page.click('#popover .send');
    await waitForState(page, taskId, 'completed');
    assert.deepEqual(await outputs(page, taskId), ['[{"id":"q","answer":"Approve once","custom":false}]']);
  } finally {
    await page.close();
  }
});
