import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { BRIDGE_CHANNELS, type Snapshot, type TaskView } from '../../main/app/bridge/contract.js';
import { unixRequest } from '../helpers/http.js';
import { SCREENSHOTS, seriousViolations, startApp, type AppFixture } from './app-fixture.js';
import { armedPopover, deepFocused, popoverClosed, popoverOpen, tabTo, waitingIs } from './popover-helpers.js';
import { card, hostSnapshot, startTask, timelineText, waitForState } from './task-cards.js';

let app: AppFixture;

before(async () => {
  app = await startApp();
});

after(async () => {
  await app?.close();
});

const snapshot = (): Promise<Snapshot> => hostSnapshot(app);

async function taskView(taskId: string): Promise<TaskView | undefined> {
  return (await snapshot()).tasks.find((t) => t.taskId === taskId);
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Pids of the processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').includes(marker)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found.filter((pid) => pid !== process.pid);
}

describe('the app window (real preload, bridge, gateway, broker and agents; Chromium)', () => {
  test('the main window: agents, plugins with their tools, how a client connects; no token in the page; no serious accessibility violation', async () => {
    const page = await app.open();
    try {
      const agents = await page.$$eval('#agents .agent button', (bs) => bs.map((b) => b.textContent));
      assert.deepEqual(agents.sort(), ['local-coder', 'local-reviewer']);
      assert.deepEqual(await page.$$eval('#agent option', (os) => os.map((o) => (o as HTMLOptionElement).value).sort()), ['local-coder', 'local-reviewer']);
      const modules = await page.$$eval('#modules details', (ds) => ds.map((d) => ({ name: d.getAttribute('data-module'), tools: [...d.querySelectorAll('.tools code')].map((c) => c.textContent) })));
      const textTools = modules.find((m) => m.name === 'text-tools');
      assert.ok(textTools?.tools.includes('echo'), `text-tools lists its tools: ${JSON.stringify(modules)}`);
      assert.ok(modules.some((m) => m.name === 'slow-tools'));
      await page.click('#modules details[data-module="text-tools"] summary');

      const hints = await page.$$eval('#hints .hint', (bs) => bs.map((b) => b.textContent));
      assert.deepEqual(hints, ['say', 'step', 'exec', 'write', 'ask', 'invoke', 'agents', 'post', 'sleep', 'fail']);
      await page.click('#hints .hint:text-is("exec")');
      assert.equal(await page.inputValue('#prompt'), 'exec echo hi');
      await page.fill('#prompt', '');

      assert.deepEqual(await seriousViolations(page), []);
      await page.screenshot({ path: join(SCREENSHOTS, 'main-window.png') });

      await page.click('#tab-connect');
      assert.equal(await page.textContent('#connect .socket-path'), app.gw.socketPath);
      assert.equal(await page.textContent('#connect .token-path'), app.gw.tokenPath);
      const client = JSON.parse((await page.textContent('#connect-client')) ?? '') as { command: string; args: string[] };
      assert.deepEqual(client.args.slice(0, 2), ['chatty-gateway', 'mcp-stdio']);
      assert.match((await page.textContent('#connect-curl')) ?? '', /--unix-socket .*gateway\.sock/);
      assert.deepEqual(await seriousViolations(page), []);
      await page.screenshot({ path: join(SCREENSHOTS, 'connect.png') });

      const html = await page.content();
      assert.ok(!html.includes(app.gw.gateway.token()), 'the launch token never reaches the renderer');
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('start `exec echo hi` on local-coder: the approval popover names the asker; Approve and `hi` appears in the timeline', async () => {
    const page = await app.open();
    try {
      const taskId = await startTask(page, 'local-coder', 'exec echo hi');
      await armedPopover(page, 'approval');
      const dialog = await page.waitForSelector('#popover[open][data-kind="approval"]');
      assert.equal(await dialog.$eval('#popover-title', (e) => e.textContent), 'Run this command?');
      assert.equal(await dialog.$eval('.subject', (e) => e.textContent), 'echo hi');
      assert.match((await dialog.$eval('.asker', (e) => e.textContent)) ?? '', /^local-coder-\d+$/);
      assert.match((await dialog.$eval('#popover-desc', (e) => e.textContent)) ?? '', /^local-coder-\d+ asks to run a command in its workspace/);
      assert.deepEqual(await dialog.$$eval('.chain li', (lis) => lis.map((li) => li.textContent)), ['root', 'local-coder']);
      assert.equal(await dialog.$eval('.task-id', (e) => e.textContent), taskId);
      // The title has the focus, not a button: Enter alone never answers.
      assert.equal(await deepFocused(page), 'popover-title');
      assert.deepEqual(await seriousViolations(page), []);
      await page.screenshot({ path: join(SCREENSHOTS, 'approval.png') });

      await dialog.$eval('.approve', (b) => (b as HTMLButtonElement).click());
      await waitForState(page, taskId, 'completed');
      assert.equal(await popoverOpen(page), false);
      const outputs = await page.$$eval(`${card(taskId)} .output`, (ps) => ps.map((p) => p.textContent));
      assert.deepEqual(outputs, ['hi\n[exit code 0]\n']);
      assert.match(await timelineText(page, taskId), /approved echo hi/);
      assert.deepEqual(await page.$$eval(`${card(taskId)} .tree .node`, (ns) => ns.map((n) => n.textContent?.replace(/-[0-9]+$/, '-n'))), ['root', 'local-coder-n']);
      await page.screenshot({ path: join(SCREENSHOTS, 'task-timeline.png') });
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('Deny: the command never runs', async () => {
    const page = await app.open();
    try {
      const marker = join(app.scratch, 'denied-ran');
      const taskId = await startTask(page, 'local-coder', `exec touch ${marker}`);
      await armedPopover(page, 'approval');
      await page.click('#popover .deny');
      await waitForState(page, taskId, 'failed');
      assert.match(await timelineText(page, taskId), new RegExp(`denied touch ${marker}.*failed: exec denied: touch ${marker}`));
      assert.equal(existsSync(marker), false, 'the denied command did not run');
      assert.deepEqual(await page.$$eval(`${card(taskId)} .output`, (ps) => ps.length), 0);
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('a write approval from the keyboard: the diff stat, focus trapped, Escape puts it off, focus returns; Deny', async () => {
    const page = await app.open();
    try {
      const taskId = await startTask(page, 'local-coder', 'write notes.txt hello\\nworld');
      await armedPopover(page, 'approval');
      const dialog = await page.waitForSelector('#popover[open][data-kind="approval"]');
      assert.equal(await dialog.$eval('#popover-title', (e) => e.textContent), 'Write this file?');
      assert.equal(await dialog.$eval('.subject', (e) => e.textContent), 'notes.txt');
      assert.equal(await dialog.$eval('.diffstat', (e) => e.textContent), '+2 -0');
      await tabTo(page, '.deny');
      await page.keyboard.press('Tab');
      assert.equal(await deepFocused(page), 'Approve once');
      await tabTo(page, '.later');
      await page.keyboard.press('Shift+Tab');
      assert.equal(await page.evaluate(() => document.querySelector('chatty-approvals')?.shadowRoot?.activeElement?.closest('dialog') !== null), true, 'focus stays in the popover');
      await page.keyboard.press('Escape');
      await popoverClosed(page);
      await waitingIs(page, '1 waiting');
      assert.equal(await deepFocused(page), 'prompt');
      await page.click('#waiting');
      await armedPopover(page, 'approval');
      await page.click('#popover .deny');
      await waitForState(page, taskId, 'failed');
      assert.match(await timelineText(page, taskId), /failed: write denied: notes\.txt/);
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('a question from a depth-2 sub-agent shows its chain and is answered by choosing an option, then Send', async () => {
    const page = await app.open();
    try {
      const taskId = await startTask(page, 'local-coder', 'invoke local-reviewer ask Which database? | Postgres | SQLite');
      await armedPopover(page, 'question');
      const dialog = await page.waitForSelector('#popover[open][data-kind="question"]');
      assert.equal(await dialog.$eval('legend', (e) => e.textContent), 'Which database?');
      assert.match((await dialog.$eval('.asker', (e) => e.textContent)) ?? '', /^local-reviewer-\d+$/);
      assert.deepEqual(await dialog.$$eval('.chain li', (lis) => lis.map((li) => li.textContent)), ['root', 'local-coder', 'local-reviewer']);
      assert.deepEqual(await dialog.$$eval('.option', (bs) => bs.map((b) => b.textContent)), ['Postgres', 'SQLite']);
      // The task's tree draws the delegation: root, local-coder-n under it, local-reviewer-n under that.
      const tree = await page.$$eval(`${card(taskId)} .tree .node`, (nodes) =>
        nodes.map((n) => {
          let depth = 0;
          for (let el = n.parentElement; el; el = el.parentElement) if (el.tagName === 'UL') depth += 1;
          return `${depth}:${n.textContent?.replace(/-[0-9]+$/, '-n')}`;
        }),
      );
      assert.deepEqual(tree, ['1:root', '2:local-coder-n', '3:local-reviewer-n']);
      assert.deepEqual(await seriousViolations(page), []);
      await page.screenshot({ path: join(SCREENSHOTS, 'question.png') });

      await page.click('#popover .option:text-is("SQLite")');
      assert.equal(await popoverOpen(page), true, 'choosing is not sending');
      await page.click('#popover .send');
      await waitForState(page, taskId, 'completed');
      assert.match(await timelineText(page, taskId), /answered SQLite/);
      assert.deepEqual(await page.$$eval(`${card(taskId)} .output`, (ps) => ps.map((p) => p.textContent)), ['answer: SQLite\n']);
      await page.screenshot({ path: join(SCREENSHOTS, 'delegation.png') });
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('a free-text answer is sent as the answer', async () => {
    const page = await app.open();
    try {
      const taskId = await startTask(page, 'local-reviewer', 'ask Name the branch?');
      await armedPopover(page, 'question');
      await tabTo(page, '.free');
      await page.keyboard.type('feature/health');
      await page.keyboard.press('Enter');
      await waitForState(page, taskId, 'completed');
      assert.deepEqual(await page.$$eval(`${card(taskId)} .output`, (ps) => ps.map((p) => p.textContent)), ['answer: feature/health\n']);
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('two approvals at once are queued and both answered', async () => {
    const page = await app.open();
    try {
      const one = await startTask(page, 'local-coder', 'exec echo one');
      const two = await startTask(page, 'local-reviewer', 'exec echo two');
      await waitingIs(page, '2 waiting');
      await armedPopover(page, 'approval');
      const first = await page.$eval('#popover', (d) => (d as HTMLElement).dataset['requestId']);
      assert.match((await page.textContent('#popover .queue')) ?? '', /^1 more waiting after this one: local-(coder|reviewer)-\d+ asks for approval$/);
      await page.screenshot({ path: join(SCREENSHOTS, 'two-approvals.png') });
      await page.click('#popover .approve');
      await page.waitForFunction((id) => {
        const d = document.querySelector('chatty-approvals')?.shadowRoot?.getElementById('popover') as HTMLDialogElement;
        return d.open && d.dataset['requestId'] !== id;
      }, first);
      assert.equal(await page.textContent('#waiting'), '1 waiting');
      assert.equal(await page.textContent('#popover .queue'), '');
      await armedPopover(page, 'approval');
      await page.click('#popover .approve');
      await waitForState(page, one, 'completed');
      await waitForState(page, two, 'completed');
      assert.deepEqual(await page.$$eval(`${card(one)} .output`, (ps) => ps.map((p) => p.textContent)), ['one\n[exit code 0]\n']);
      assert.deepEqual(await page.$$eval(`${card(two)} .output`, (ps) => ps.map((p) => p.textContent)), ['two\n[exit code 0]\n']);
      await waitingIs(page, '');
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('cancelling a task reaps its processes: both workers and the command the sub-agent runs', async () => {
    const page = await app.open();
    try {
      const known = new Set(app.pids());
      const taskId = await startTask(page, 'local-coder', 'invoke local-reviewer exec sleep 61.25');
      await armedPopover(page, 'approval');
      await page.click('#popover .approve');
      await page.waitForFunction((id) => document.querySelector(`article.task[data-task-id="${id}"] .timeline`)?.textContent?.includes('running sleep 61.25'), taskId);
      const workers = app.pids().filter((p) => !known.has(p));
      assert.equal(workers.length, 2);
      const command = await until('the sleep', async () => {
        const found = processesWith('sleep 61.25');
        return found.length > 0 ? found : undefined;
      });
      await page.screenshot({ path: join(SCREENSHOTS, 'cancel.png') });
      await page.click(`${card(taskId)} .cancel`);
      await waitForState(page, taskId, 'cancelled');
      // The task ends only once everything under it is reaped.
      assert.deepEqual(workers.filter((p) => app.alive().includes(p)), []);
      assert.deepEqual(processesWith('sleep 61.25'), [], `the command's processes (${command.join(', ')}) are gone`);
      assert.match(await timelineText(page, taskId), /cancelled/);
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('closing the window with an approval and a question waiting denies the one and withdraws the other', async () => {
    const page = await app.open();
    const marker = join(app.scratch, 'closed-ran');
    const approval = await startTask(page, 'local-coder', `exec touch ${marker}`);
    const question = await startTask(page, 'local-reviewer', 'ask Go on? | yes | no');
    await waitingIs(page, '2 waiting');
    await page.close();
    const denied = await until('the approval task to end', async () => {
      const v = await taskView(approval);
      return v && v.state !== 'running' ? v : undefined;
    });
    assert.equal(denied.state, 'failed');
    assert.match(denied.error ?? '', /exec denied/);
    assert.ok(denied.entries.some((e) => e.kind === 'verdict' && e.text === `denied touch ${marker}: the window was closed`));
    assert.equal(existsSync(marker), false);
    const withdrawn = await until('the question task to end', async () => {
      const v = await taskView(question);
      return v && v.state !== 'running' ? v : undefined;
    });
    assert.equal(withdrawn.state, 'failed');
    assert.match(withdrawn.error ?? '', /withdrawn: the window was closed/);
    const after = await snapshot();
    assert.deepEqual([after.approvals, after.questions], [[], []]);
  });

  test('reloading the window with an approval waiting denies it; the reloaded window shows the task', async () => {
    const page = await app.open();
    try {
      const taskId = await startTask(page, 'local-coder', 'exec echo later');
      await page.waitForSelector('#popover[open]');
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      await waitForState(page, taskId, 'failed');
      const timeline = await timelineText(page, taskId);
      assert.match(timeline, /denied echo later: the window was reloaded/);
      assert.match(timeline, /failed: exec denied: echo later/);
      assert.equal(await popoverOpen(page), false);
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('every control works from the keyboard: the tabs with the arrow keys, a task started without the mouse', async () => {
    const page = await app.open();
    try {
      await page.focus('#tab-tasks');
      await page.keyboard.press('ArrowRight');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'tab-mail');
      assert.equal(await page.isVisible('#panel-mail'), true);
      assert.equal(await page.isHidden('#panel-tasks'), true);
      await page.keyboard.press('End');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'tab-connect');
      await page.keyboard.press('Home');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'tab-tasks');
      // Tab from the tab list reaches the composer: the agent, the task text, the hints, then Start.
      const order: string[] = [];
      for (let i = 0; i < 13; i++) {
        await page.keyboard.press('Tab');
        order.push(await page.evaluate(() => document.activeElement?.id || document.activeElement?.textContent || ''));
      }
      assert.deepEqual(order, ['agent', 'prompt', 'say', 'step', 'exec', 'write', 'ask', 'invoke', 'agents', 'post', 'sleep', 'fail', 'start']);
      await page.focus('#agent');
      await page.keyboard.press('ArrowDown');
      assert.equal(await page.inputValue('#agent'), 'local-reviewer');
      await page.focus('#prompt');
      await page.keyboard.type('say hello from the keyboard');
      const cards = await page.$$eval('article.task', (cs) => cs.length);
      await page.keyboard.press('Control+Enter');
      await page.waitForFunction((n) => document.querySelectorAll('article.task').length > n, cards);
      const taskId = await page.$eval('article.task', (c) => c.getAttribute('data-task-id') ?? '');
      await waitForState(page, taskId, 'completed');
      assert.deepEqual(await page.$$eval(`${card(taskId)} .output`, (ps) => ps.map((p) => p.textContent)), ['hello from the keyboard\n']);
      assert.match((await page.textContent(`${card(taskId)} h3`)) ?? '', /^local-reviewer /);
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('a request without the token on the socket shows as a refusal in the edge log', async () => {
    const page = await app.open();
    try {
      await unixRequest(app.gw.socketPath, { path: '/', headers: app.gw.auth });
      await unixRequest(app.gw.socketPath, { path: '/mcp/text-tools' });
      await page.waitForFunction(() => document.querySelectorAll('#edge tbody tr.refused').length >= 1);
      assert.match((await page.textContent('#edge-count')) ?? '', /^\d+ refused$/);
      await page.click('#tab-edge');
      const rows = await page.$$eval('#edge tbody tr', (trs) => trs.map((tr) => ({ refused: tr.classList.contains('refused'), cells: [...tr.children].map((td) => td.textContent) })));
      const newest = rows[0];
      assert.equal(newest?.refused, true);
      assert.deepEqual(newest?.cells.slice(1, 4), ['GET', '/mcp/text-tools', '401']);
      assert.ok(rows.some((r) => !r.refused && r.cells[3] === '200'));
      assert.deepEqual(await seriousViolations(page), []);
      await page.screenshot({ path: join(SCREENSHOTS, 'edge-log.png') });
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });

  test('the mailbox: a note an agent leaves for the root, and one the root posts', async () => {
    const page = await app.open();
    try {
      const taskId = await startTask(page, 'local-coder', 'post root tests pass');
      await waitForState(page, taskId, 'completed');
      await page.waitForFunction(() => document.getElementById('mail-count')?.textContent === '1');
      await page.click('#tab-mail');
      assert.match((await page.textContent('#mailbox .mail-in')) ?? '', /local-coder-\d+ → roottests pass/);
      await page.fill('#post-to', 'nobody-0');
      await page.fill('#post-text', 'hello');
      await page.click('#post button[type="submit"]');
      await page.waitForSelector('#mailbox .mail-out.refused');
      assert.match((await page.textContent('#post-status')) ?? '', /Refused: not on tree/);
      assert.deepEqual(await seriousViolations(page), []);
      await page.screenshot({ path: join(SCREENSHOTS, 'mailbox.png') });
      assert.deepEqual(app.problems(page), []);
    } finally {
      await page.close();
    }
  });
});
