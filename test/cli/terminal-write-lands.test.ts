/**
 * A write through a linked folder: `docs/notes.md` with `docs -> ~/elsewhere`. The prompt showed
 * `path: <workspace>/docs/notes.md (OUTSIDE the workspace)`: a path inside the workspace said to
 * be outside it, and nowhere the file the kernel really writes. Now the request carries where it
 * lands (`lands`, the gateway's reading of the links) when that is another path, and the prompt
 * says it: `lands in: …/elsewhere/notes.md (through a link)`.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ApprovalRequest } from '../../main/broker/index.js';
import { vouchedContext } from '../../main/broker/approvals/index.js';
import { deniedPromptText } from './prompt-text.js';

test('a write through a linked folder names where it lands; a plain write says nothing more', async () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-lands-')));
  const workspace = join(base, 'ws');
  mkdirSync(join(workspace, 'src'), { recursive: true });
  mkdirSync(join(base, 'elsewhere'));
  symlinkSync(join(base, 'elsewhere'), join(workspace, 'docs'));
  try {
    const write = (path: string): ApprovalRequest => ({ kind: 'write', command_or_path: path, asker: { agent: 'coder-0', chain: ['root', 'coder'] }, role: 'coder', ...vouchedContext('write', path, undefined, workspace, undefined) });
    const linked = write('docs/notes.md');
    assert.equal(linked.lands, join(base, 'elsewhere', 'notes.md'));
    assert.equal(write('src/a.ts').lands, undefined);
    // A right-to-left override in the linked folder's name: the request is hidden (code points, never remembered).
    mkdirSync(join(base, 'else\u202ewhere'));
    symlinkSync(join(base, 'else\u202ewhere'), join(workspace, 'notes'));
    const bidi = write('notes/a.md');
    assert.equal(bidi.lands, join(base, 'else\u202ewhere', 'a.md'));
    assert.equal(bidi.hidden, true);
    assert.deepEqual(bidi.proposals, []);
    assert.equal(linked.hidden, false);
    const text = await deniedPromptText(linked);
    assert.ok(text.includes(`  lands in: ${join(base, 'elsewhere', 'notes.md')} (through a link)\n`), text);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('where a write lands, or the workspace, holding right-to-left letters is also shown in running order (the command alone was)', async () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-lands-rtl-')));
  const workspace = join(base, 'ws');
  mkdirSync(join(workspace, 'src'), { recursive: true });
  mkdirSync(join(base, 'א', '1', 'ב'), { recursive: true });
  symlinkSync(join(base, 'א', '1', 'ב'), join(workspace, 'docs')); // a terminal applying bidi draws …/ב/1/א/notes.md
  try {
    const request: ApprovalRequest = { kind: 'write', command_or_path: 'docs/notes.md', asker: { agent: 'coder-0', chain: ['root', 'coder'] }, role: 'coder', ...vouchedContext('write', 'docs/notes.md', undefined, workspace, undefined) };
    const text = await deniedPromptText(request);
    assert.ok(text.includes(`  !! RIGHT-TO-LEFT LETTERS in where it lands: in order, ${base}/<U+05D0>/1/<U+05D1>/notes.md\n`), text);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("a tall diff stat (the worker's words) comes before what the gateway vouches for: it cannot push where the write lands out of view, nor be read as it", async () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-lands-stat-')));
  const workspace = join(base, 'ws');
  mkdirSync(join(workspace, 'src'), { recursive: true });
  symlinkSync('../package.json', join(workspace, 'src', 'gen.ts')); // lands in package.json, no tag
  try {
    // 200 lines of a plausible `git diff --stat`, ending in lines that read like the gateway's.
    const stat = [...Array.from({ length: 200 }, (_, i) => ` src/file${i}.ts | 2 +-`), `  path: ${workspace}/src/gen.ts`, '  (no link)'].join('\n');
    const request: ApprovalRequest = { kind: 'write', command_or_path: 'src/gen.ts', diff_stat: stat, asker: { agent: 'coder-0', chain: ['root', 'coder'] }, role: 'coder', ...vouchedContext('write', 'src/gen.ts', stat, workspace, undefined) };
    const text = await deniedPromptText(request);
    // Only the stat's first 20 lines are shown: its last ones, dressed as ours, not at all.
    assert.ok(!text.includes('(no link)'), text.slice(-600));
    const lastStatLine = text.lastIndexOf("more lines of the worker's words, not shown");
    const lands = text.lastIndexOf(`\n  lands in: ${join(workspace, 'package.json')} (through a link)\n`);
    const path = text.lastIndexOf(`\n  path: ${join(workspace, 'src', 'gen.ts')}\n`);
    assert.ok(lastStatLine >= 0 && lands > lastStatLine && path > lastStatLine, text.slice(-600));
    // Right above the answer: nothing of the worker's between the gateway's lines and `approve?`.
    assert.ok(text.slice(lands).split('\n').slice(2, -1).every((line) => line.startsWith('  !! ') || line.startsWith('  approve?') || line.startsWith('  denied') || line === ''), text.slice(lands));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
