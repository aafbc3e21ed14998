/**
 * The swap at `serve`'s prompt: a worker shows `npm test`, waits while the person reads it, then
 * withdraws it with `npm publish` queued behind. The next prompt's `[y/N]` came after the usual
 * guard time, so a `y⏎` the person had been about to type for the request they read answered the
 * other one. Now a prompt that follows a withdrawn one (not one the person answered) says so and
 * waits three guard times for its cue. Over a stand-in terminal (raw mode) and in-memory screen.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type { ApprovalRequest } from '../../main/broker/index.js';
import { vouchedContext } from '../../main/broker/approvals/index.js';
import { LineQueue, TerminalPrompter } from '../../main/cli/terminal-root/index.js';

const request = (command: string): ApprovalRequest => ({
  kind: 'exec',
  command_or_path: command,
  asker: { agent: 'coder-0', chain: ['root', 'coder'] },
  role: 'coder',
  ...vouchedContext('exec', command, undefined, undefined, undefined),
});

test('a prompt after a withdrawn one names it and shows its cue only after three guard times; a y typed meanwhile is ignored', async () => {
  const output = new PassThrough();
  let text = '';
  output.on('data', (chunk: Buffer) => (text += String(chunk)));
  const shows = async (needle: string, times = 1): Promise<void> => {
    while (text.split(needle).length - 1 < times) await new Promise((resolve) => output.once('data', resolve));
  };
  const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => undefined });
  const lines = new LineQueue(input, output);
  const guardMs = 200;
  const prompter = new TerminalPrompter({ input, output, lines, guardMs });
  try {
    const first = new AbortController();
    const read = prompter.approve(request('npm test'), first.signal);
    const swapped = prompter.approve(request('npm publish'), new AbortController().signal);
    await shows('approve? [y/N] ');
    first.abort();
    assert.equal(await read, 'denied');
    await shows('run: npm publish');
    const shownAt = Date.now();
    assert.match(text, /the request above was withdrawn: the one below is another request/);
    // One guard time later the person, who was reading `npm test`, types y.
    await new Promise((resolve) => setTimeout(resolve, guardMs * 1.5));
    input.write('y\r');
    await shows('approve? [y/N] ', 2);
    assert.ok(Date.now() - shownAt >= 3 * guardMs - 20, `cue after ${Date.now() - shownAt} ms`);
    assert.match(text.slice(text.lastIndexOf('run: npm publish')), /ignored keys typed before this prompt appeared/);
    input.write('n\r');
    assert.equal(await swapped, 'denied');
  } finally {
    prompter.close();
    lines.close();
  }
});
