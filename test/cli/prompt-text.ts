import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import type { ApprovalRequest } from '../../main/broker/index.js';
import { TerminalPrompter } from '../../main/cli/terminal-root/index.js';

/** What the terminal prompt writes for `request`, answered `n` (piped input: no guard time). */
export async function deniedPromptText(request: ApprovalRequest): Promise<string> {
  const output = new PassThrough();
  let text = '';
  output.on('data', (chunk: Buffer) => (text += String(chunk)));
  const input = new PassThrough();
  const prompter = new TerminalPrompter({ input, output });
  const answer = prompter.approve(request, new AbortController().signal);
  input.write('n\n');
  assert.equal(await answer, 'denied');
  prompter.close();
  return text;
}
