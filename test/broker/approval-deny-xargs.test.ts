// A deny exec rule against a program run by xargs, parallel or find -exec: the words it gets from
// its input (or the files found) are unknown, so a rule on that program fails closed.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { AuditRow } from '../../main/index.js';
import { plan, splitJson, startBroker } from './helpers.js';

const approve = (command: string) => ({ approve: { kind: 'exec' as const, command_or_path: command } });

it('echo deploy | xargs make, xargs make <<< deploy, parallel make ::: deploy and find -exec make {} + are denied by a deny rule make deploy under --approvals allow; xargs rm is not', async () => {
  const t = startBroker(['coder']);
  try {
    t.root.onApproval(() => ({ verdict: 'approved', by: 'mode:allow' }));
    const exact = t.broker.human.rules.add({ effect: 'deny', kind: 'exec', agent: '*', match: { exact: 'make deploy' } });
    const rows: AuditRow[] = [];
    t.broker.human.audit.subscribe((row) => rows.push(row));
    const lines = [
      'echo deploy | xargs make',
      'xargs make <<< deploy',
      'xargs -n1 make < targets',
      'printf deploy | xargs -I{} make {}',
      'parallel make ::: deploy',
      'find . -name deploy -exec make {} +',
      'echo x | xargs rm',
    ];
    const result = await t.root.invoke('coder', plan({ seq: lines.map(approve) }));
    assert.equal(result.success, true, result.error);
    assert.deepEqual((splitJson(result.response) as string[][]).map((v) => v[0]), [...lines.slice(0, -1).map(() => 'denied'), 'approved']);
    assert.deepEqual(rows.map((row) => row.by), [...lines.slice(0, -1).map(() => `rule:${exact.id}`), 'mode:allow']);
  } finally {
    await t.close();
  }
});

it('a deny prefix git push covers echo push | xargs git', async () => {
  const t = startBroker(['coder']);
  try {
    t.root.onApproval(() => ({ verdict: 'approved', by: 'mode:allow' }));
    t.broker.human.rules.add({ effect: 'deny', kind: 'exec', agent: '*', match: { prefix: 'git push' } });
    const result = await t.root.invoke('coder', plan({ seq: ['echo push | xargs git', 'git status'].map(approve) }));
    assert.deepEqual((splitJson(result.response) as string[][]).map((v) => v[0]), ['denied', 'approved']);
  } finally {
    await t.close();
  }
});
