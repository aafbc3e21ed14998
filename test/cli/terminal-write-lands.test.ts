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
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type { ApprovalRequest } from '../../main/broker/index.js';
import { vouchedContext } from '../../main/broker/approvals/index.js';
import { TerminalPrompter } from '../../main/cli/terminal-root/index.js';

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
    const output = new PassThrough();
    let text = '';
    output.on('data', (chunk: Buffer) => (text += String(chunk)));
    const input = new PassThrough();
    const prompter = new TerminalPrompter({ input, output });
    const answer = prompter.approve(linked, new AbortController().signal);
    input.write('n\n');
    assert.equal(await answer, 'denied');
    assert.ok(text.includes(`  lands in: ${join(base, 'elsewhere', 'notes.md')} (through a link)\n`), text);
    prompter.close();
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
