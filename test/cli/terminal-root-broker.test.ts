/**
 * The terminal root with real workers (the broker tests' agent) over a piped input:
 *
 * - Who decided, in the audit row. When the input ended before an approval was answered (stdin
 *   closed, a script shorter than its prompts), the prompter denied it by answering 'denied'
 *   itself, so approvals.log said `by: human`: a person decided what no one answered. Now it is
 *   `by: no-root`; a typed `n` stays `human`.
 * - Right-to-left letters. A terminal that applies the bidi algorithm (GNOME Terminal, Konsole)
 *   draws the characters between two of them in another order than they run (`cp a.txt א/../../ב/`
 *   as `cp a.txt ב/../../א/`); the request now carries a line with the command in the order it
 *   runs, each such letter as its code point, which no terminal reorders.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type { AuditRow } from '../../main/broker/index.js';
import { attachTerminalRoot } from '../../main/cli/terminal-root/index.js';
import { plan, splitJson, startBroker, type TestBroker } from '../broker/helpers.js';

/** A broker with agent `coder`, the terminal root on it reading `answers` (then the input's end), what it says, and the audit rows. */
async function withTerminal(answers: string, run: (t: TestBroker, said: () => string, rows: AuditRow[]) => Promise<void>): Promise<void> {
  const t = startBroker(['coder']);
  const input = new PassThrough();
  const output = new PassThrough();
  let said = '';
  output.on('data', (chunk: Buffer) => (said += chunk.toString()));
  const terminal = attachTerminalRoot(t.root, { approvals: 'prompt', input, output });
  const rows: AuditRow[] = [];
  t.broker.human.audit.subscribe((row) => rows.push(row));
  input.end(answers);
  try {
    await run(t, () => said, rows);
  } finally {
    terminal.close();
    await t.close();
  }
}

const approve = (command: string) => ({ approve: { kind: 'exec', command_or_path: command } });

test('an approval the input ended before answering is denied by no-root; one answered n is denied by human', async () => {
  await withTerminal('n\n', async (t, said, rows) => {
    const result = await t.root.invoke('coder', plan({ seq: [approve('make a'), approve('make b')] }));
    assert.deepEqual(splitJson(result.response), [['denied'], ['denied']]);
    assert.deepEqual(rows.map((r) => [r.command_or_path, r.verdict, r.by]), [
      ['make a', 'denied', 'human'],
      ['make b', 'denied', 'no-root'],
    ]);
    assert.ok(said().includes('(no answer: the input ended) denied\n'), said());
  });
});

test('a command with right-to-left letters is also shown in the order it runs, each such letter as its code point', async () => {
  await withTerminal('n\n', async (t, said) => {
    await t.root.invoke('coder', plan(approve('cp a.txt א/../../ב/')));
    assert.ok(said().includes('asks to run: cp a.txt א/../../ב/\n'), said());
    assert.ok(said().includes('  !! RIGHT-TO-LEFT LETTERS: a terminal may draw the characters around them in another order; as it runs: cp a.txt <U+05D0>/../../<U+05D1>/\n'), said());
  });
});
