// The app window (the built renderer and preload, served as the app: protocol serves them) driven
// from the keyboard alone, a request withdrawn while its popover is open, a question of several
// parts, Copy, and the page's CSP header: real bridge, gateway, broker and agents, in Chromium.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { INVOKE_CHANNELS, type Snapshot } from '../../main/app/bridge/contract.js';
import { CONTENT_SECURITY_POLICY } from '../../main/app/window-options.js';
import { plan } from '../broker/helpers.js';
import { SCREENSHOTS, seriousViolations, startApp, type AppFixture } from './app-fixture.js';
import { armedPopover, deepFocused as focused, popoverClosed, tabTo, waitingIs } from './popover-helpers.js';
import { card, outputs, trustedFrame, waitForState } from './task-cards.js';

let app: AppFixture;

before(async () => {
  app = await startApp({ planner: true });
});

after(async () => {
  await app?.close();
});

/** From the prompt (focused), starts its text with Ctrl+Enter and returns the new card's task id. */
async function startFromPrompt(page: Page, text: string): Promise<string> {
  assert.equal(await focused(page), 'prompt');
  const before = await page.$$eval('article.task', (cards) => cards.length);
  await page.keyboard.type(text);
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction((n) => document.querySelectorAll('article.task').length > n, before);
  return page.$eval('article.task', (c) => c.getAttribute('data-task-id') ?? '');
}

/** Picks an agent with its sidebar button, from the keyboard: the composer gets it and the prompt the focus. */
async function pickAgent(page: Page, agent: string): Promise<void> {
  await tabTo(page, `#agents .agent button[aria-label="choose ${agent} for a new task"]`, true);
  await page.keyboard.press('Enter');
  assert.equal(await page.inputValue('#agent'), agent);
  assert.equal(await focused(page), 'prompt');
}

const trusted = (): { url: string; isMainFrame: boolean } => trustedFrame(app);

describe('the app window from the keyboard; withdrawn requests; several questions; Copy; the CSP', () => {
  test("the page comes with the app: protocol's headers, and a CSP violation shows as a problem", async () => {
    const page = await app.open();
    try {
      const headers = app.headers(page);
      assert.equal(headers['content-security-policy'], CONTENT_SECURITY_POLICY);
      assert.equal(headers['x-frame-options'], 'DENY');
      assert.deepEqual(app.problems(page), [], 'the app itself violates nothing');
      const reported = page.waitForEvent('console', (m) => m.type() === 'error' && /Content Security Policy/.test(m.text()));
      const ran = await page.evaluate(() => {
        const script = document.createElement('script');
        script.textContent = 'window.__inline = true';
        document.body.append(script);
        return (window as unknown as { __inline?: boolean }).__inline === true;
      });
      assert.equal(ran, false, 'an inline script does not run');
      await reported;
      assert.ok(
        app.problems(page).some((p) => /Content Security Policy/.test(p)),
        `the violation is caught: ${JSON.stringify(app.problems(page))}`,
      );
    } finally {
      await page.close();
    }
  });

  test('an agent button, Approve, a question option, Later and the waiting button, all from the keyboard', async () => {
    const page = await app.open();
    try {
      await pickAgent(page, 'local-coder');
      const approved = await startFromPrompt(page, 'exec echo keys');
      await armedPopover(page, 'approval');
      assert.equal(await focused(page), 'popover-title');
      await tabTo(page, '.deny');
      await page.keyboard.press('Tab');
      assert.equal(await focused(page), 'Approve once');
      await page.keyboard.press('Enter');
      await waitForState(page, approved, 'completed');
      assert.deepEqual(await outputs(page, approved), ['keys\n[exit code 0]\n']);
      assert.equal(await focused(page), 'prompt', 'focus is back where it was');

      await pickAgent(page, 'local-reviewer');
      const asked = await startFromPrompt(page, 'ask Pick one? | red | blue');
      await armedPopover(page, 'question');
      assert.equal(await focused(page), 'popover-title');
      await tabTo(page, '.later');
      await page.keyboard.press('Enter');
      await popoverClosed(page);
      await waitingIs(page, '1 waiting');
      assert.equal(await focused(page), 'prompt');
      await tabTo(page, '#waiting', true);
      await page.keyboard.press('Enter');
      await armedPopover(page, 'question');
      await tabTo(page, '.option');
      assert.equal(await focused(page), 'red');
      await page.keyboard.press('Tab');
      assert.equal(await focused(page), 'blue');
      await page.keyboard.press('Space');
      await tabTo(page, '.send');
      await page.keyboard.press('Enter');
      await waitForState(page, asked, 'completed');
      assert.deepEqual(await outputs(page, asked), ['answer: blue\n']);
      await waitingIs(page, '');
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test("a task's Cancel, and the mailbox's Post, from the keyboard", async () => {
    const page = await app.open();
    try {
      await pickAgent(page, 'local-coder');
      const taskId = await startFromPrompt(page, 'say waiting\nsleep 60000');
      await page.waitForFunction((id) => document.querySelector(`article.task[data-task-id="${id}"] .output`)?.textContent === 'waiting\n', taskId);
      await tabTo(page, `${card(taskId)} .cancel`);
      await page.keyboard.press('Enter');
      await waitForState(page, taskId, 'cancelled');

      await tabTo(page, '#tab-tasks', true);
      await page.keyboard.press('ArrowRight');
      assert.equal(await focused(page), 'tab-mail');
      await page.keyboard.press('Tab');
      assert.equal(await focused(page), 'post-to');
      await page.keyboard.type('nobody-0');
      await page.keyboard.press('Tab');
      assert.equal(await focused(page), 'post-text');
      await page.keyboard.type('hello from the keyboard');
      await page.keyboard.press('Tab');
      assert.equal(await focused(page), 'Post');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#mailbox .mail-out.refused');
      assert.match((await page.textContent('#post-status')) ?? '', /Refused: not on tree/);
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('Copy from the keyboard puts the example on the clipboard (the browser here grants the write; the app grant is tested in test/app/security-policy)', async () => {
    const page = await app.open({ clipboard: true });
    try {
      await tabTo(page, '#tab-tasks', true);
      await page.keyboard.press('End');
      assert.equal(await focused(page), 'tab-connect');
      await tabTo(page, '#connect .copy-block button');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.getElementById('announce')?.textContent === 'copied');
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      assert.equal(copied, await page.textContent('#connect-client'));
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('a request withdrawn while its popover is open closes the popover, and focus goes back', async () => {
    const page = await app.open();
    try {
      await pickAgent(page, 'local-coder');
      const taskId = await startFromPrompt(page, 'exec echo never');
      await armedPopover(page, 'approval');
      assert.equal(await focused(page), 'popover-title');
      // Main cancels the task: its worker withdraws the approval it was waiting on.
      await app.host.handle(INVOKE_CHANNELS.cancelTask, trusted(), { taskId });
      await popoverClosed(page);
      await waitingIs(page, '');
      assert.equal(await page.$eval('#popover .body', (b) => b.childElementCount), 0);
      assert.equal(await focused(page), 'prompt');
      // A withdrawn request leaves a trace line.
      assert.match((await page.textContent('#trace')) ?? '', /withdrawn \(the asker withdrew it\): exec echo never/);
      await waitForState(page, taskId, 'cancelled');
      const snapshot = (await app.host.handle(INVOKE_CHANNELS.snapshot, trusted(), undefined)) as Snapshot;
      assert.deepEqual(snapshot.approvals, []);
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('a question of several parts: a fieldset each, "Send answers" once each is answered, from the keyboard; no serious accessibility violation', async () => {
    const page = await app.open();
    try {
      const questions = [
        { id: 'db', question: 'Which database?', options: ['Postgres', 'SQLite'] },
        { id: 'branch', question: 'Name the branch?' },
      ];
      const { taskId } = (await app.host.handle(INVOKE_CHANNELS.startTask, trusted(), { agent: 'planner', prompt: plan({ ask: questions }) })) as { taskId: string };
      await armedPopover(page, 'question');
      const dialog = await page.waitForSelector('#popover[open][data-kind="question"]');
      assert.deepEqual(await dialog.$$eval('fieldset.question legend', (ls) => ls.map((l) => l.textContent)), ['Which database?', 'Name the branch?']);
      assert.deepEqual(await dialog.$$eval('fieldset.question', (fs) => fs.map((f) => f.querySelectorAll('.option').length)), [2, 0]);
      assert.match((await dialog.$eval('#popover-desc', (p) => p.textContent)) ?? '', /asks\. Answer each question, then send\.$/);
      assert.equal(await dialog.$eval('.send', (b) => [b.textContent, b.getAttribute('aria-disabled')].join(' ')), 'Send answers true');
      assert.deepEqual(await seriousViolations(page), []);
      await page.screenshot({ path: join(SCREENSHOTS, 'questions.png') });

      await tabTo(page, '.option');
      assert.equal(await focused(page), 'Postgres');
      await page.keyboard.press('Tab');
      assert.equal(await focused(page), 'SQLite');
      await page.keyboard.press('Enter');
      // One answer of two: nothing is sent yet.
      assert.equal(await dialog.$eval('.option[aria-pressed="true"]', (b) => b.textContent), 'SQLite');
      assert.equal(await page.$eval('#popover', (d) => (d as HTMLDialogElement).open), true);
      assert.equal(await dialog.$eval('.send', (b) => b.getAttribute('aria-disabled')), 'true');
      await page.keyboard.press('Tab');
      assert.equal(await focused(page), 'free-0');
      await page.keyboard.press('Tab');
      assert.equal(await focused(page), 'free-1');
      await page.keyboard.type('feature/keys');
      assert.equal(await dialog.$eval('.send', (b) => b.getAttribute('aria-disabled')), 'false');
      assert.deepEqual(await seriousViolations(page), []);
      await tabTo(page, '#popover .send');
      await page.keyboard.press('Enter');
      await waitForState(page, taskId, 'completed');
      const answers = JSON.parse((await outputs(page, taskId))[0] ?? 'null') as unknown;
      assert.deepEqual(answers, [
        { id: 'db', answer: 'SQLite', custom: false },
        { id: 'branch', answer: 'feature/keys', custom: true },
      ]);
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });
});
