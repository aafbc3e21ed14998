import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { BRIDGE_CHANNELS, type Snapshot, type TaskView } from '../../main/app/bridge/contract.js';
import { plan } from '../broker/helpers.js';
import { unixRequest } from '../helpers/http.js';
import { SCREENSHOTS, seriousViolations, startApp, type AppFixture } from './app-fixture.js';

let app: AppFixture;

before(async () => {
  app = await startApp(['coder', 'lead', 'helper']);
});

after(async () => {
  await app?.close();
});

/** Starts a task from the composer, as a person would, and returns its card's task id. */
async function startTask(page: Page, agent: string, prompt: string): Promise<string> {
  const before = await page.$$eval('article.task', (cards) => cards.length);
  await page.selectOption('#agent', agent);
  await page.fill('#prompt', prompt);
  await page.click('#start');
  await page.waitForFunction((n) => document.querySelectorAll('article.task').length > n, before);
  return page.$eval('article.task', (card) => card.getAttribute('data-task-id') ?? '');
}

function card(taskId: string): string {
  return `article.task[data-task-id="${taskId}"]`;
}

async function waitForState(page: Page, taskId: string, state: string): Promise<void> {
  await page.waitForSelector(`${card(taskId)}[data-state="${state}"]`);
}

async function timelineText(page: Page, taskId: string): Promise<string> {
  return page.$eval(`${card(taskId)} .timeline`, (el) => el.textContent ?? '');
}

/** The host's own view (what a reloaded window would get), asked as the trusted window. */
async function snapshot(): Promise<Snapshot> {
  return (await app.host.handle(BRIDGE_CHANNELS.snapshot, { url: app.pageUrl, isMainFrame: true }, undefined)) as Snapshot;
}

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

describe('the app window (real preload, bridge, gateway, broker and agents; Chromium)', () => {
  test('the main window: agents, plugins with their tools, how a client connects; no token in the page; no serious accessibility violation', async () => {
    const page = await app.open();
    try {
      const agents = await page.$$eval('#agents .agent button', (bs) => bs.map((b) => b.textContent));
      assert.deepEqual(agents.sort(), ['coder', 'helper', 'lead']);
      assert.deepEqual(await page.$$eval('#agent option', (os) => os.map((o) => (o as HTMLOptionElement).value).sort()), ['coder', 'helper', 'lead']);
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
    } finally {
      await page.close();
    }
  });

  test('an exec approval names the asker; Approve lets it through and the timeline shows it', async () => {
    const page = await app.open();
    try {
      const taskId = await startTask(page, 'coder', plan({ approve: { kind: 'exec', command_or_path: 'echo hi', diff_stat: undefined } }));
      const dialog = await page.waitForSelector('#popover[open][data-kind="approval"]');
      assert.equal(await dialog.$eval('.kind', (e) => e.textContent), 'exec');
      assert.equal(await dialog.$eval('.subject', (e) => e.textContent), 'echo hi');
      assert.match((await dialog.$eval('.asker', (e) => e.textContent)) ?? '', /^coder-\d+$/);
      assert.deepEqual(await dialog.$$eval('.chain li', (lis) => lis.map((li) => li.textContent)), ['root', 'coder']);
      // Deny is where focus lands: Enter alone never approves.
      assert.equal(await page.evaluate(() => document.activeElement?.className), 'deny');
      assert.deepEqual(await seriousViolations(page), []);
      await page.screenshot({ path: join(SCREENSHOTS, 'approval.png') });

      await dialog.$eval('.approve', (b) => (b as HTMLButtonElement).click());
      await waitForState(page, taskId, 'completed');
      assert.equal(await page.$eval('#popover', (d) => (d as HTMLDialogElement).open), false);
      const timeline = await timelineText(page, taskId);
      assert.match(timeline, /approved echo hi/);
      assert.match(timeline, /\["approved"\]/, 'what the agent did after the approval is in the timeline');
      assert.deepEqual(await page.$$eval(`${card(taskId)} .tree .node`, (ns) => ns.map((n) => n.textContent?.replace(/-\d+$/, '-n'))), ['root', 'coder-n']);
      await page.screenshot({ path: join(SCREENSHOTS, 'task-timeline.png') });
    } finally {
      await page.close();
    }
  });

  test('Deny, from the keyboard (Escape), reaches the agent as denied', async () => {
    const page = await app.open();
    try {
      const taskId = await startTask(page, 'coder', plan({ approve: { kind: 'write', command_or_path: 'notes.txt', diff_stat: '+3 -1' } }));
      const dialog = await page.waitForSelector('#popover[open][data-kind="approval"]');
      assert.equal(await dialog.$eval('.diffstat', (e) => e.textContent), '+3 -1');
      // Focus stays in the popover: Tab from the last control wraps to the first.
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Approve');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Deny');
      await page.keyboard.press('Shift+Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Approve');
      await page.keyboard.press('Escape');
      await waitForState(page, taskId, 'completed');
      const timeline = await timelineText(page, taskId);
      assert.match(timeline, /denied notes\.txt/);
      assert.match(timeline, /\["denied"\]/);
      assert.doesNotMatch(timeline, /\["approved"\]/);
      // Focus went back where it was before the popover opened.
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'prompt');
    } finally {
      await page.close();
    }
  });

  test('a question from a depth-2 sub-agent shows its chain and is answered by clicking an option', async () => {
    const page = await app.open();
    try {
      const question = plan({ ask: [{ id: 'db', question: 'Which database?', options: ['Postgres', 'SQLite'] }] });
      const taskId = await startTask(page, 'lead', plan({ delegate: { to: 'helper', prompt: JSON.parse(question) as unknown } }));
      const dialog = await page.waitForSelector('#popover[open][data-kind="question"]');
      assert.equal(await dialog.$eval('legend', (e) => e.textContent), 'Which database?');
      assert.match((await dialog.$eval('.asker', (e) => e.textContent)) ?? '', /^helper-\d+$/);
      assert.deepEqual(await dialog.$$eval('.chain li', (lis) => lis.map((li) => li.textContent)), ['root', 'lead', 'helper']);
      assert.deepEqual(await dialog.$$eval('.option', (bs) => bs.map((b) => b.textContent)), ['Postgres', 'SQLite']);
      // The task's tree draws the chain: root → lead-n → helper-n.
      const tree = await page.$$eval(`${card(taskId)} .tree .node`, (nodes) =>
        nodes.map((n) => {
          let depth = 0;
          for (let el = n.parentElement; el; el = el.parentElement) if (el.tagName === 'UL') depth += 1;
          return `${depth}:${n.textContent?.replace(/-[0-9]+$/, '-n')}`;
        }),
      );
      assert.deepEqual(tree, ['1:root', '2:lead-n', '3:helper-n']);
      assert.deepEqual(await seriousViolations(page), []);
      await page.screenshot({ path: join(SCREENSHOTS, 'question.png') });

      await dialog.$eval('.option:text-is("SQLite")', (b) => (b as HTMLButtonElement).click());
      await waitForState(page, taskId, 'completed');
      const timeline = await timelineText(page, taskId);
      assert.match(timeline, /answered SQLite/);
      assert.match(timeline, /SQLite/);
      const view = await taskView(taskId);
      assert.ok(view?.entries.some((e) => e.kind === 'text' && e.text.includes('\\"answer\\":\\"SQLite\\"')), 'the sub-agent got the answer and reported it up');
    } finally {
      await page.close();
    }
  });

  test('a free-text answer is sent as custom', async () => {
    const page = await app.open();
    try {
      const taskId = await startTask(page, 'coder', plan({ ask: [{ id: 'name', question: 'Name the branch?' }] }));
      await page.waitForSelector('#popover[open][data-kind="question"]');
      assert.equal(await page.evaluate(() => document.activeElement?.className), 'free');
      await page.keyboard.type('feature/health');
      await page.keyboard.press('Enter');
      await waitForState(page, taskId, 'completed');
      const view = await taskView(taskId);
      assert.ok(view?.entries.some((e) => e.kind === 'text' && e.text === JSON.stringify([{ id: 'name', answer: 'feature/health', custom: true }])));
    } finally {
      await page.close();
    }
  });

  test('two approvals at once are queued and both answered', async () => {
    const page = await app.open();
    try {
      const taskId = await startTask(page, 'coder', plan({ approve: { kind: 'exec', command_or_path: 'make test' }, times: 2 }));
      await page.waitForFunction(() => document.getElementById('waiting')?.textContent === '2 waiting');
      const first = await page.$eval('#popover', (d) => (d as HTMLElement).dataset['requestId']);
      assert.equal(await page.textContent('#popover .queue'), '1 more waiting after this one');
      await page.screenshot({ path: join(SCREENSHOTS, 'two-approvals.png') });
      await page.click('#popover .approve');
      await page.waitForFunction((id) => {
        const d = document.getElementById('popover') as HTMLDialogElement;
        return d.open && d.dataset['requestId'] !== id;
      }, first);
      assert.equal(await page.textContent('#waiting'), '1 waiting');
      await page.click('#popover .approve');
      await waitForState(page, taskId, 'completed');
      assert.match(await timelineText(page, taskId), /\["approved","approved"\]/);
      assert.equal(await page.isHidden('#waiting'), true);
    } finally {
      await page.close();
    }
  });

  test('cancelling a task reaps its processes, the sub-agent\'s too', async () => {
    const page = await app.open();
    try {
      const known = new Set(app.pids());
      const taskId = await startTask(page, 'lead', plan({ delegate: { to: 'helper', prompt: { hang: true } } }));
      await page.waitForFunction((id) => document.querySelector(`article.task[data-task-id="${id}"] .timeline`)?.textContent?.includes('helper-'), taskId);
      const started = await until('both workers', async () => {
        const mine = app.pids().filter((p) => !known.has(p));
        return mine.length === 2 ? mine : undefined;
      });
      assert.equal(started.filter((p) => app.alive().includes(p)).length, 2);
      await page.click(`${card(taskId)} .cancel`);
      await waitForState(page, taskId, 'cancelled');
      // The task ends only once everything under it is reaped.
      assert.deepEqual(started.filter((p) => app.alive().includes(p)), []);
      assert.match(await timelineText(page, taskId), /cancelled/);
    } finally {
      await page.close();
    }
  });

  test('closing the window with an approval and a question waiting denies the one and withdraws the other', async () => {
    const page = await app.open();
    const approval = await startTask(page, 'coder', plan({ approve: { kind: 'exec', command_or_path: 'rm -rf build' } }));
    const question = await startTask(page, 'helper', plan({ ask: [{ id: 'q', question: 'Go on?', options: ['yes', 'no'] }] }));
    await page.waitForFunction(() => document.getElementById('waiting')?.textContent === '2 waiting');
    await page.close();
    const denied = await until('the approval task to end', async () => {
      const v = await taskView(approval);
      return v && v.state !== 'running' ? v : undefined;
    });
    assert.equal(denied.state, 'completed');
    assert.ok(denied.entries.some((e) => e.kind === 'text' && e.text === '["denied"]'), 'the agent was told denied');
    const withdrawn = await until('the question task to end', async () => {
      const v = await taskView(question);
      return v && v.state !== 'running' ? v : undefined;
    });
    assert.equal(withdrawn.state, 'failed');
    assert.match(withdrawn.error ?? '', /withdrawn: the window was closed/);
    assert.deepEqual((await snapshot()).approvals, []);
  });

  test('reloading the window with an approval waiting denies it; the reloaded window shows the task', async () => {
    const page = await app.open();
    try {
      const taskId = await startTask(page, 'coder', plan({ approve: { kind: 'exec', command_or_path: 'deploy' } }));
      await page.waitForSelector('#popover[open]');
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      await waitForState(page, taskId, 'completed');
      const timeline = await timelineText(page, taskId);
      assert.match(timeline, /denied deploy: the window was reloaded/);
      assert.match(timeline, /\["denied"\]/);
      assert.equal(await page.$eval('#popover', (d) => (d as HTMLDialogElement).open), false);
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
    } finally {
      await page.close();
    }
  });

  test('the mailbox: a note an agent leaves for the root, and one the root posts', async () => {
    const page = await app.open();
    try {
      const taskId = await startTask(page, 'coder', plan({ post: { to: 'root', text: 'tests pass' } }));
      await waitForState(page, taskId, 'completed');
      await page.waitForFunction(() => document.getElementById('mail-count')?.textContent === '1');
      await page.click('#tab-mail');
      assert.match((await page.textContent('#mailbox .mail-in')) ?? '', /coder-\d+ → roottests pass/);
      await page.fill('#post-to', 'nobody-0');
      await page.fill('#post-text', 'hello');
      await page.click('#post button[type="submit"]');
      await page.waitForSelector('#mailbox .mail-out.refused');
      assert.match((await page.textContent('#post-status')) ?? '', /Refused: not on tree/);
      assert.deepEqual(await seriousViolations(page), []);
      await page.screenshot({ path: join(SCREENSHOTS, 'mailbox.png') });
    } finally {
      await page.close();
    }
  });
});
