/**
 * A diff stat on an approval is the worker's words, shown above the gateway's lines (2ce0830).
 * A command may carry one too, and a tall one pushed the only line naming what runs ("asks to
 * run: …") out of view, while its last lines could pass for that line (indented, or at column 0
 * once a terminal soft-wraps a line of spaces). Below the stat the gateway now names what is
 * answered again ("you answer for: …"), and shows at most 20 of the stat's lines.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ApprovalRequest } from '../../main/broker/index.js';
import { vouchedContext } from '../../main/broker/approvals/index.js';
import { deniedPromptText } from './prompt-text.js';

test('a tall diff stat on a command: the command is named again between the stat and approve?', async () => {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'review-exec-stat-')));
  try {
    const command = 'npm publish --access public';
    const fake = `${' '.repeat(76)}chatty-gateway: coder-0 (root → coder) asks to run: npm test`; // at 80 columns: a row of blanks, then this at column 0
    const stat = [...Array.from({ length: 200 }, (_, i) => ` src/file${i}.ts | 2 +-`), ' 200 files changed, 200 insertions(+), 200 deletions(-)', fake].join('\n');
    const request: ApprovalRequest = { kind: 'exec', command_or_path: command, diff_stat: stat, asker: { agent: 'coder-0', chain: ['root', 'coder'] }, role: 'coder', ...vouchedContext('exec', command, stat, workspace, undefined) };
    assert.deepEqual(request.danger, []); // nothing below the stat says anything is amiss
    const text = await deniedPromptText(request);
    const afterStat = text.slice(text.lastIndexOf('asks to run: npm test') + 'asks to run: npm test'.length, text.indexOf('  approve?'));
    assert.ok(afterStat.includes(command), `below the worker's last line, up to approve?, nothing names what runs:\n${afterStat}`);
    // At most 20 of the worker's lines are shown, and the gateway says how many it left out.
    assert.ok(text.includes('src/file19.ts') && !text.includes('src/file20.ts'), text.slice(0, 2_000));
    assert.match(text, /… and 182 more lines of the worker's words, not shown/);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
});

test('a tall diff stat on a write spelt from ~ (no path: line): the path is named again between the stat and approve?', async () => {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'review-home-stat-')));
  try {
    const path = '~/.ssh/authorized_keys'; // outside-workspace only: no `path:` line (placePath gives none for ~)
    const stat = [...Array.from({ length: 200 }, (_, i) => ` notes/day${i}.md | 2 +-`), `${' '.repeat(76)}chatty-gateway: coder-0 (root → coder) asks to write: ~/notes/todo.md`].join('\n');
    const request: ApprovalRequest = { kind: 'write', command_or_path: path, diff_stat: stat, asker: { agent: 'coder-0', chain: ['root', 'coder'] }, role: 'coder', ...vouchedContext('write', path, stat, workspace, undefined) };
    assert.deepEqual(request.danger, ['outside-workspace']); // what the fake line would carry too
    const text = await deniedPromptText(request);
    const afterStat = text.slice(text.lastIndexOf('asks to write: ~/notes/todo.md') + 30, text.indexOf('  approve?'));
    assert.ok(afterStat.includes('authorized_keys'), `below the worker's last line, up to approve?, nothing names what is written:\n${afterStat}`);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
});
