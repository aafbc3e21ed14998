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
import { armedPopover } from './popover-helpers.js';
import { trustedFrame, waitForState } from './task-cards.js';

let app: AppFixture;

before(async () => {
  app = await startApp({ planner: true });
});

after(async () => {
  await app?.close();
});

/** The characters of the popover's `selector` in the order they are drawn, left to right (one line). */
function drawnOrder(page: Page, selector: string): Promise<string> {
  return page.evaluate((s) => {
    const box = document.querySelector('chatty-approvals')?.shadowRoot?.querySelector(s);
    if (!box) return '';
    const chars: [string, number][] = [];
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? '';
      for (let i = 0; i < text.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        chars.push([text[i]!, range.getBoundingClientRect().left]);
      }
    }
    return chars
      .sort((a, b) => a[1] - b[1])
      .map(([c]) => c)
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
