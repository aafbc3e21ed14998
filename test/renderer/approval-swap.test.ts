// The swap: a worker shows a harmless approval, waits while the person reads it (their pointer on
// Approve), then withdraws it with a dangerous one queued behind. The next popover took the same
// place with the same buttons, awake after the usual 600 ms guard: a click the person had been
// about to make for the request they read approved the other one. Now a popover that replaces a
// withdrawn one (not one the person answered) says so in its head and keeps its buttons inert for
// three guard times. In Chromium, on the built page with the real bridge host, gateway and broker.
// The same when nothing was queued at the withdraw and the other request is asked a moment later:
// the popover closed, reopened in the same place with the same buttons, no note, one guard time.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { INVOKE_CHANNELS } from '../../main/app/bridge/contract.js';
import { plan } from '../broker/helpers.js';
import { SCREENSHOTS, startApp, type AppFixture } from './app-fixture.js';
import { armedPopover, popoverClosed, setGuard } from './popover-helpers.js';
import { hostSnapshot, trustedFrame, waitForState } from './task-cards.js';

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

/**
 * Records, as the page sees them, when the popover first shows `subject` and when it wakes after
 * that (a test-side clock would start late, when its poll noticed the subject: a loaded machine
 * would shorten the inert time it reads). `inertMs()` reads them once the popover is armed.
 */
async function watchWake(page: Awaited<ReturnType<AppFixture['open']>>, subject: string): Promise<{ inertMs(): Promise<number> }> {
  await page.evaluate((text) => {
    const dialog = document.querySelector('chatty-approvals')!.shadowRoot!.getElementById('popover') as HTMLDialogElement;
    const times: { shown?: number; armed?: number } = {};
    (window as unknown as { wakeTimes: typeof times }).wakeTimes = times;
    new MutationObserver(() => {
      if (times.shown === undefined && dialog.open && dialog.querySelector('.subject')?.textContent === text) times.shown = performance.now();
      if (times.shown !== undefined && times.armed === undefined && dialog.dataset['armed'] === 'true') times.armed = performance.now();
    }).observe(dialog, { attributes: true, childList: true, subtree: true, characterData: true });
  }, subject);
  return {
    inertMs: async () => {
      const times = await page.evaluate(() => (window as unknown as { wakeTimes: { shown: number; armed: number } }).wakeTimes);
      return times.armed - times.shown;
    },
  };
}

/** Guard 400 ms; `npm test` shown and armed, `npm publish` queued behind it (the queue line says so). */
async function harmlessThenQueued(page: Awaited<ReturnType<AppFixture['open']>>): Promise<{ harmless: string; swapped: string }> {
  await setGuard(page, 400);
  const harmless = await startPlan({ approve: { kind: 'exec', command_or_path: 'npm test' } });
  await armedPopover(page, 'approval');
  const swapped = await startPlan({ approve: { kind: 'exec', command_or_path: 'npm publish' } });
  await page.waitForFunction(() => document.querySelector('chatty-approvals')?.shadowRoot?.querySelector('#popover .queue')?.textContent?.includes('1 more'));
  return { harmless, swapped };
}

test('a popover that replaces a withdrawn one says so and stays inert three guard times; one after an answer, one guard time', async () => {
  const page = await app.open();
  try {
    const { harmless, swapped } = await harmlessThenQueued(page);
    // Who waits behind it is named, so a queued request is never a stranger when it appears.
    assert.equal(await page.textContent('#popover .queue'), '1 more waiting after this one: planner-1 asks for approval');
    const wake = await watchWake(page, 'npm publish');
    await app.host.handle(INVOKE_CHANNELS.cancelTask, trustedFrame(app), { taskId: harmless });
    await page.waitForFunction(() => document.querySelector('chatty-approvals')?.shadowRoot?.querySelector('#popover .subject')?.textContent === 'npm publish');
    assert.match((await page.textContent('#popover .replaced-note')) ?? '', /was withdrawn.*npm test.*this is another request/is);
    await page.screenshot({ path: join(SCREENSHOTS, 'approval-swap.png') });
    await armedPopover(page, 'approval');
    const inert = await wake.inertMs();
    assert.ok(inert >= 3 * 400 - 20, `awake after ${inert} ms`);
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

const subjectIs = (page: Awaited<ReturnType<AppFixture['open']>>, text: string) =>
  page.waitForFunction((t) => document.querySelector('chatty-approvals')?.shadowRoot?.querySelector('#popover[open] .subject')?.textContent === t, text);

// The window taking the focus back re-arms the popover (keys on their way were meant for another
// program) with one guard time: it cut short the three a popover that replaced a withdrawn one
// waits, exactly when a person clicks back into the window after a swap they did not see.
test('the window taking the focus back just after a swap does not shorten the three guard times', async () => {
  const page = await app.open();
  try {
    const { harmless, swapped } = await harmlessThenQueued(page);
    const wake = await watchWake(page, 'npm publish');
    await app.host.handle(INVOKE_CHANNELS.cancelTask, trustedFrame(app), { taskId: harmless });
    await subjectIs(page, 'npm publish');
    // The focus event the window gets when the person clicks back into it (headless Chromium does not deliver one on bringToFront).
    await page.evaluate(() => window.dispatchEvent(new Event('focus')));
    await armedPopover(page, 'approval');
    const inert = await wake.inertMs();
    assert.ok(inert >= 3 * 400 - 20, `awake after ${inert} ms`);
    await page.click('#popover .deny');
    await waitForState(page, swapped, 'completed');
  } finally {
    await page.close();
  }
});

test('withdrawn with nothing queued, then another request asked a moment later (at the element): the note, inert three guard times', async () => {
  const page = await app.open();
  try {
    await setGuard(page, 400);
    const task = await startPlan({ approve: { kind: 'exec', command_or_path: 'npm test' } });
    await armedPopover(page, 'approval');
    const view = (await hostSnapshot(app)).approvals[0]!;
    const shownAt = await page.evaluate(
      (v) =>
        new Promise<number>((resolve) => {
          const element = document.querySelector('chatty-approvals') as unknown as { withdraw(id: string, reason: string): void; add(w: unknown): void };
          element.withdraw(v.requestId, 'cancelled');
          setTimeout(() => {
            element.add({ kind: 'approval', view: { ...v, requestId: 'swap-b', commandOrPath: 'npm publish', proposals: [] } });
            resolve(Date.now());
          }, 5);
        }),
      view,
    );
    await subjectIs(page, 'npm publish');
    assert.match((await page.textContent('#popover .replaced-note')) ?? '', /was withdrawn.*npm test.*this is another request/is);
    await armedPopover(page, 'approval');
    const inert = Date.now() - shownAt;
    assert.ok(inert >= 3 * 400 - 50, `awake after ${inert} ms`);
    await app.host.handle(INVOKE_CHANNELS.cancelTask, trustedFrame(app), { taskId: task });
  } finally {
    await page.close();
  }
});

test('a task cancelled while its request is shown, nothing queued, then another task asks (real stack): the note, inert three guard times', async () => {
  const page = await app.open();
  try {
    await setGuard(page, 400);
    const first = await startPlan({ approve: { kind: 'exec', command_or_path: 'npm test' } });
    await armedPopover(page, 'approval');
    await app.host.handle(INVOKE_CHANNELS.cancelTask, trustedFrame(app), { taskId: first });
    await popoverClosed(page); // withdrawn with nothing queued: the popover closes
    const wake = await watchWake(page, 'npm publish');
    const second = await startPlan({ approve: { kind: 'exec', command_or_path: 'npm publish' } });
    await subjectIs(page, 'npm publish');
    assert.match((await page.textContent('#popover .replaced-note')) ?? '', /was withdrawn.*npm test/is);
    await page.screenshot({ path: join(SCREENSHOTS, 'approval-swap-after-close.png') });
    await armedPopover(page, 'approval');
    const inert = await wake.inertMs();
    assert.ok(inert >= 3 * 400 - 20, `awake after ${inert} ms`);
    await page.click('#popover .deny');
    await waitForState(page, second, 'completed');
    // Shown and answered: the next one has no note and the usual guard.
    const third = await startPlan({ approve: { kind: 'exec', command_or_path: 'npm run lint' } });
    await subjectIs(page, 'npm run lint');
    assert.equal(await page.isHidden('#popover .replaced-note'), true);
    await armedPopover(page, 'approval');
    await page.click('#popover .deny');
    await waitForState(page, third, 'completed');
  } finally {
    await page.close();
  }
});

// A dialog's `close` event comes as a task of its own after `close()`. The popover took every
// `close` it had not seen coming for the browser closing it, and put off whatever was shown when the
// event came: a request shown in the moment between one popover closing and its event (the next
// step of a task asked right after an answer) was put off unseen, the popover closed, "1 waiting".
test('a request shown just after the popover closed (before its close event) stays shown, not put off', async () => {
  const page = await app.open();
  try {
    await setGuard(page, 0);
    const task = await startPlan({ approve: { kind: 'exec', command_or_path: 'npm test' } });
    await armedPopover(page, 'approval');
    const view = (await hostSnapshot(app)).approvals[0]!;
    const state = await page.evaluate(
      (v) =>
        new Promise<{ open: boolean; subject: string | undefined; waiting: string }>((resolve) => {
          const element = document.querySelector('chatty-approvals') as unknown as HTMLElement & { withdraw(id: string, reason: string): void; add(w: unknown): void };
          const dialog = element.shadowRoot!.getElementById('popover') as HTMLDialogElement;
          dialog.addEventListener(
            'close',
            () =>
              // After the popover's own listener (added first) has seen the event.
              queueMicrotask(() => resolve({ open: dialog.open, subject: dialog.querySelector('.subject')?.textContent ?? undefined, waiting: element.shadowRoot!.querySelector('.bar button')?.textContent ?? '' })),
            { once: true },
          );
          element.withdraw(v.requestId, 'cancelled'); // nothing queued: the popover closes; its event is queued
          element.add({ kind: 'approval', view: { ...v, requestId: 'next-b', commandOrPath: 'npm run lint', proposals: [] } });
        }),
      view,
    );
    assert.deepEqual({ open: state.open, subject: state.subject }, { open: true, subject: 'npm run lint' }, `the next request was put off: ${state.waiting}`);
    await app.host.handle(INVOKE_CHANNELS.cancelTask, trustedFrame(app), { taskId: task });
  } finally {
    await page.close();
  }
});
