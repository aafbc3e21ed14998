// Right-to-left letters without any control character: the display rule shows them as they are
// (they are visible), but the browser's bidi algorithm then reorders the neutral characters
// between two of them: `cp a.txt א/../../ב/` was drawn `cp a.txt ב/../../א/`, and `rm x א 1 2 3 ב`
// as `rm x ב 3 2 1 א`, another path and another order of arguments than what runs. Now the
// command, the resolved path, the workspace and a match to confirm are drawn in the order the
// shell reads them, each run of right-to-left letters still reading right to left within itself.
// In Chromium, on the built page with the real preload, bridge host, gateway, broker and agent.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { INVOKE_CHANNELS } from '../../main/app/bridge/contract.js';
import { plan } from '../broker/helpers.js';
import { startApp, type AppFixture } from './app-fixture.js';
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

/** The characters of the popover's `selector` in the order they are drawn: line by line, each left to right. */
function drawnOrder(page: Page, selector: string): Promise<string> {
  return page.evaluate((s) => {
    const box = document.querySelector('chatty-approvals')?.shadowRoot?.querySelector(s);
    if (!box) return '';
    const chars: { c: string; left: number; mid: number; height: number; line: number }[] = [];
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? '';
      for (let i = 0; i < text.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const r = range.getBoundingClientRect();
        chars.push({ c: text[i]!, left: r.left, mid: r.top + r.height / 2, height: r.height, line: 0 });
      }
    }
    // A text that wraps (the note of a replaced popover): a new line where the middle drops by half a line.
    chars.sort((a, b) => a.mid - b.mid);
    let lineMid = chars[0]?.mid ?? 0;
    let line = 0;
    for (const ch of chars) {
      if (ch.mid - lineMid > ch.height / 2) {
        line++;
        lineMid = ch.mid;
      }
      ch.line = line;
    }
    return chars
      .sort((a, b) => a.line - b.line || a.left - b.left)
      .map(({ c }) => c)
      .join('');
  }, selector);
}

/** `text` as it should be drawn: in logical order, each run of right-to-left letters reversed (it reads right to left). */
const expected = (text: string): string => text.replace(/[\u0590-\u08FF]+/g, (run) => [...run].reverse().join(''));

test('right-to-left letters do not reorder the command, the resolved path or the match around them: drawn in the order the shell reads them', async () => {
  const page = await app.open({ viewport: { width: 1200, height: 800 } });
  try {
    const cases: ['exec' | 'write', string][] = [
      ['exec', 'cp a.txt א/../../ב/'],
      ['exec', 'rm -rf ~/x א 1 2 3 ב'],
      ['write', 'א 1/ב/x.txt'],
    ];
    for (const [kind, text] of cases) {
      const { taskId } = (await app.host.handle(INVOKE_CHANNELS.startTask, trustedFrame(app), { agent: 'planner', prompt: plan({ approve: { kind, command_or_path: text } }) })) as { taskId: string };
      await armedPopover(page, 'approval');
      assert.equal(await drawnOrder(page, '.subject'), expected(text), `${text}: the command as drawn`);
      if (kind === 'write') {
        const path = (await page.textContent('#popover .path')) ?? '';
        assert.ok(path.includes('א 1/ב'), path);
        assert.equal(await drawnOrder(page, '.path'), expected(path), `${text}: the resolved path as drawn`);
      }
      await page.click('#popover .deny');
      await waitForState(page, taskId, 'completed');
    }
    assert.deepEqual(app.problems(page), []);
  } finally {
    await page.close();
  }
});

// The note a popover shows in place of a withdrawn request, and the trace line, named the withdrawn
// request's path through the plain display rule: the bidi algorithm drew `x/א ב/../ג.txt` as
// `x/ג/../ב א.txt`, in the very note a person compares with what they had been reading.
test('the withdrawn request in the replaced note and the trace line is drawn in the order the shell reads it', async () => {
  const page = await app.open();
  try {
    await setGuard(page, 0);
    const path = 'x/\u05d0 \u05d1/../\u05d2.txt';
    const a = await startPlan({ approve: { kind: 'write', command_or_path: path } });
    await armedPopover(page, 'approval');
    const b = await startPlan({ approve: { kind: 'exec', command_or_path: 'npm publish' } });
    await page.waitForFunction(() => document.querySelector('chatty-approvals')?.shadowRoot?.querySelector('#popover .queue')?.textContent?.includes('1 more'));
    await app.host.handle(INVOKE_CHANNELS.cancelTask, trustedFrame(app), { taskId: a });
    await page.waitForFunction(() => document.querySelector('chatty-approvals')?.shadowRoot?.querySelector('#popover .replaced-note') !== null);
    assert.equal(await drawnOrder(page, '#popover .replaced-note .in-order'), expected(path));
    assert.equal(await drawnOrder(page, '.trace .in-order'), expected(path));
    await app.host.handle(INVOKE_CHANNELS.cancelTask, trustedFrame(app), { taskId: b });
  } finally {
    await page.close();
  }
});

// The hidden-characters warning always gave `<U+202E>` as its example: read as "this holds U+202E"
// for a path whose hidden characters are combining accents.
test('the hidden-characters warning names the first hidden character the request holds', async () => {
  const page = await app.open();
  try {
    const task = await startPlan({ approve: { kind: 'write', command_or_path: 'notes/a\u0301\u0301\u200b.md' } });
    await armedPopover(page, 'approval');
    const warning = (await page.textContent('#popover .hidden-warning')) ?? '';
    assert.match(warning, /like <U\+0301>/);
    assert.doesNotMatch(warning, /U\+202E/);
    await page.click('#popover .deny');
    await waitForState(page, task, 'completed');
  } finally {
    await page.close();
  }
});
