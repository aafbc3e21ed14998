/**
 * An approval whose text holds a lone surrogate (half of a UTF-16 pair, which a worker's or a
 * model's JSON string may carry) is refused before anyone is asked: the person would be shown a
 * marker (<U+DC00>), while the shell or the file system gets U+FFFD's bytes in its place, so what
 * runs would not be what was approved. A pair (an emoji) is one character and is asked as usual.
 * Real worker (children/agent.ts) on a real socketpair; the audit row keeps the text as sent.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AuditRow } from '../../main/broker/approvals/index.js';
import { plan, splitJson, startBroker } from './helpers.js';

test("an exec or a write whose text holds a lone surrogate is denied unasked (by: unpaired), whatever a rule says; an emoji's pair is asked", async () => {
  const t = startBroker(['asker']);
  const seen: string[] = [];
  t.root.onApproval((request) => {
    seen.push(request.command_or_path);
    return 'approved';
  });
  const rows: AuditRow[] = [];
  t.broker.human.audit.subscribe((row) => rows.push(row));
  const lone = "printf '%s' 'a\udc00b'";
  const high = 'echo \ud83d';
  const pair = "printf '%s' '\ud83d\ude00'";
  // An allow rule that would cover the lone one: it is not read.
  t.broker.human.rules.add({ effect: 'allow', kind: 'exec', agent: 'asker', match: { exact: lone } });
  try {
    const result = await t.root.invoke(
      'asker',
      plan({
        seq: [
          { approve: { kind: 'exec', command_or_path: lone } },
          { approve: { kind: 'exec', command_or_path: high } },
          { approve: { kind: 'write', command_or_path: 'notes.txt', diff_stat: '+1 -0 \udfff' } },
          { approve: { kind: 'write', command_or_path: 'n\udc00tes.txt', diff_stat: '+1 -0' } },
          { approve: { kind: 'exec', command_or_path: pair } },
        ],
      }),
    );
    assert.deepEqual(splitJson(result.response), [['denied'], ['denied'], ['denied'], ['denied'], ['approved']]);
    assert.deepEqual(seen, [pair], 'only the well-formed one reached the handler (the terminal prompt, the popover)');
    assert.deepEqual(
      rows.map((row) => [row.verdict, row.by, row.command_or_path]),
      [
        ['denied', 'unpaired', lone],
        ['denied', 'unpaired', high],
        ['denied', 'unpaired', 'notes.txt'],
        ['denied', 'unpaired', 'n\udc00tes.txt'],
        ['approved', 'human', pair],
      ],
    );
  } finally {
    await t.close();
  }
});
