// A deny exec rule against an alias defined earlier in the line: the alias's name runs its value
// (dash always, bash with expand_aliases), which the gateway does not expand: it fails closed.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { AuditRow } from '../../main/index.js';
import { plan, splitJson, startBroker } from './helpers.js';

const approve = (command: string) => ({ approve: { kind: 'exec' as const, command_or_path: command } });

it('a line that defines an alias (alias m=make, then m deploy) is denied by a deny rule make deploy under --approvals allow; a line without one is not', async () => {
  const t = startBroker(['coder']);
  try {
    t.root.onApproval(() => ({ verdict: 'approved', by: 'mode:allow' }));
    const rule = t.broker.human.rules.add({ effect: 'deny', kind: 'exec', agent: '*', match: { exact: 'make deploy' } });
    const rows: AuditRow[] = [];
    t.broker.human.audit.subscribe((row) => rows.push(row));
    const lines = [
      'alias m=make\nm deploy',
      'alias m=make; m deploy',
      'shopt -s expand_aliases\nalias m=make\nm deploy',
      "builtin alias m='make'\nm deploy",
      "sh -c 'alias m=make\nm deploy'",
      'make build',
    ];
    const result = await t.root.invoke('coder', plan({ seq: lines.map(approve) }));
    assert.equal(result.success, true, result.error);
    const verdicts = (splitJson(result.response) as string[][]).map((v) => v[0]);
    assert.deepEqual(verdicts, ['denied', 'denied', 'denied', 'denied', 'denied', 'approved']);
    assert.deepEqual(rows.map((row) => row.by), [...lines.slice(0, -1).map(() => `rule:${rule.id}`), 'mode:allow']);
  } finally {
    await t.close();
  }
});
