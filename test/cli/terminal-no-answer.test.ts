/**
 * Who decided, as the terminal root's audit rows say it. When the terminal's input ended before
 * an approval was answered (stdin closed, a script shorter than its prompts), the prompter denied
 * it by answering 'denied' itself, so approvals.log said `by: human`: a person decided what no one
 * answered. Now it is `by: no-root` (nobody answered); a typed `n` stays `human`. Real workers (the
 * broker tests' agent), the real terminal root over a piped input.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type { AuditRow } from '../../main/broker/index.js';
import { attachTerminalRoot } from '../../main/cli/terminal-root/index.js';
import { plan, splitJson, startBroker } from '../broker/helpers.js';

test('an approval the input ended before answering is denied by no-root; one answered n is denied by human', async () => {
  const t = startBroker(['coder']);
  const input = new PassThrough();
  const output = new PassThrough();
  let said = '';
  output.on('data', (chunk: Buffer) => (said += chunk.toString()));
  const terminal = attachTerminalRoot(t.root, { approvals: 'prompt', input, output });
  const rows: AuditRow[] = [];
  t.broker.human.audit.subscribe((row) => rows.push(row));
  try {
    input.end('n\n'); // one answer, then the input ends
    const result = await t.root.invoke('coder', plan({ seq: [{ approve: { kind: 'exec', command_or_path: 'make a' } }, { approve: { kind: 'exec', command_or_path: 'make b' } }] }));
    assert.deepEqual(splitJson(result.response), [['denied'], ['denied']]);
    assert.deepEqual(rows.map((r) => [r.command_or_path, r.verdict, r.by]), [
      ['make a', 'denied', 'human'],
      ['make b', 'denied', 'no-root'],
    ]);
    assert.ok(said.includes('(no answer: the input ended) denied\n'), said);
  } finally {
    terminal.close();
    await t.close();
  }
});
