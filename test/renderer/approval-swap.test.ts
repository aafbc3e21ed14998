// The swap: a worker shows a harmless approval, waits while the person reads it (their pointer on
// Approve), then withdraws it with a dangerous one queued behind. The next popover took the same
// place with the same buttons, awake after the usual 600 ms guard: a click the person had been
// about to make for the request they read approved the other one. Now a popover that replaces a
// withdrawn one (not one the person answered) says so in its head and keeps its buttons inert for
// three guard times. In Chromium, on the built page with the real bridge host, gateway and broker.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { INVOKE_CHANNELS } from '../../main/app/bridge/contract.js';
import { plan } from '../broker/helpers.js';
import { SCREENSHOTS, startApp, type AppFixture } from './app-fixture.js';
import { armedPopover, setGuard } from './popover-helpers.js';
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

test('a popover that replaces a withdrawn one says so and stays inert three guard times; one after an answer, one guard time', async () => {
  const page = await app.open();
  try {
    await setGuard(page, 400);
    const harmless = await startPlan({ approve: { kind: 'exec', command_or_path: 'npm test' } });
    await armedPopover(page, 'approval');
    const swapped = await startPlan({ approve: { kind: 'exec', command_or_path: 'npm publish' } });
    await page.waitForFunction(() => document.querySelector('chatty-approvals')?.shadowRoot?.querySelector('#popover .queue')?.textContent?.includes('1 more'));
    // Who waits behind it is named, so a queued request is never a stranger when it appears.
    assert.equal(await page.textContent('#popover .queue'), '1 more waiting after this one: planner-1 asks for approval');
    await app.host.handle(INVOKE_CHANNELS.cancelTask, trustedFrame(app), { taskId: harmless });
    await page.waitForFunction(() => document.querySelector('chatty-approvals')?.shadowRoot?.querySelector('#popover .subject')?.textContent === 'npm publish');
    const shownAt = Date.now();
    assert.match((await page.textContent('#popover .replaced-note')) ?? '', /was withdrawn.*npm test.*this is another request/is);
    await page.screenshot({ path: join(SCREENSHOTS, 'approval-swap.png') });
    await armedPopover(page, 'approval');
    const inert = Date.now() - shownAt;
    assert.ok(inert >= 3 * 400 - 50, `awake after ${inert} ms`);
    await page.click('#popover .deny');
    await waitForState(page, swapped, 'completed');

    // After an answer the next one has the usual guard and no note.
    const first = await startPlan({ seq: [{ approve: { kind: 'exec', command_or_path: 'npm test' } }, { approve: { kind: 'exec', command_or_path: 'npm run lint' } }] });
    // (The denied popover may still be open while its answer returns: wait for this one.)
    await page.waitForFunction(() => document.querySelector('chatty-approvals')?.shadowRoot?.querySelector('#popover[open] .subject')?.textContent === 'npm test');
    await armedPopover(page, 'approval');
    await page.click('#popover .deny');
    await page.waitForFunction(() => document.querySelector('chatty-approvals')?.shadowRoot?.querySelector('#popover .subject')?.textContent === 'npm run lint');
    assert.equal(await page.isHidden('#popover .replaced-note'), true);
    await armedPopover(page, 'approval');
    await page.click('#popover .deny');
    await waitForState(page, first, 'completed');
  } finally {
    await page.close();
  }
});
