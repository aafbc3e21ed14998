// Where a write lands when its path steps back (`..`) through a link, and a request whose landings
// were not all read (past the budget): both fail closed, with a tag no rule, filter or mode approves.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import type { AuditRow } from '../../main/index.js';
import { dangerTags } from '../../main/broker/approvals/index.js';
import { plan, splitJson, startBroker } from './helpers.js';

const approve = (kind: 'exec' | 'write', command: string) => ({ approve: { kind, command_or_path: command } });
let ws = '';
before(() => {
  ws = realpathSync(mkdtempSync(join(tmpdir(), 'approval-landing-')));
  mkdirSync(join(ws, '.git/hooks/sub'), { recursive: true });
  symlinkSync('.git/hooks/sub', join(ws, 'd')); // d/../pre-commit is .git/hooks/pre-commit to the kernel
  symlinkSync('.git/hooks', join(ws, 'hooks'));
});
after(() => rmSync(ws, { recursive: true, force: true }));

it("a write to d/../pre-commit, d a link to .git/hooks/sub, lands in .git/hooks: the deny glob .git/hooks/** holds under --approvals allow, and its tags say so", async () => {
  assert.ok(dangerTags('write', 'd/../pre-commit', ws, undefined, { followLinks: true }).includes('vcs-hook'));
  // Steps back from a part that does not exist: where it lands is not read.
  assert.ok(dangerTags('write', 'nope/../pre-commit', ws, undefined, { followLinks: true }).includes('unread-landing'));
  // No link before the `..`: read as written, no tag.
  assert.deepEqual(dangerTags('write', 'src/../README.md', ws, undefined, { followLinks: true }).filter((t) => t !== 'unread-landing'), []);
  const t = startBroker(['coder'], { root: { workspaceRoot: ws } });
  try {
    t.root.onApproval(() => ({ verdict: 'approved', by: 'mode:allow' }));
    t.broker.human.rules.add({ effect: 'deny', kind: 'write', agent: '*', match: { glob: '.git/hooks/**' } });
    const rows: AuditRow[] = [];
    t.broker.human.audit.subscribe((row) => rows.push(row));
    const paths = ['d/../pre-commit', './d/../pre-commit', `${ws}/d/../pre-commit`, 'nope/../.git/hooks/pre-commit'];
    const result = await t.root.invoke('coder', plan({ seq: paths.map((p) => approve('write', p)) }));
    assert.equal(result.success, true, result.error);
    assert.deepEqual((splitJson(result.response) as string[][]).map((v) => v[0]), paths.map(() => 'denied'));
    assert.ok(rows.every((row) => row.by.startsWith('rule:')), JSON.stringify(rows.map((r) => r.by)));
  } finally {
    await t.close();
  }
});

it('a request writing more paths than are followed to where they land (64) is tagged unread-landing: no allow rule approves it, not even chmod * or cp /tmp/x *', async () => {
  const files = Array.from({ length: 64 }, (_, i) => `f${i}`).join(' ');
  const chmod = `chmod 755 ${files} hooks/pre-commit`;
  const cp = `cp /tmp/x ${files} hooks/pre-commit`;
  assert.ok(dangerTags('exec', chmod, ws, undefined, { followLinks: true }).includes('unread-landing'));
  const t = startBroker(['coder'], { root: { workspaceRoot: ws } });
  try {
    const asked: string[] = [];
    t.root.onApproval((request) => {
      asked.push(request.command_or_path);
      return 'denied';
    });
    t.broker.human.rules.add({ effect: 'allow', kind: 'exec', agent: '*', match: { prefix: 'chmod' } });
    t.broker.human.rules.add({ effect: 'allow', kind: 'exec', agent: '*', match: { prefix: 'cp /tmp/x' } });
    const rows: AuditRow[] = [];
    t.broker.human.audit.subscribe((row) => rows.push(row));
    const result = await t.root.invoke('coder', plan({ seq: [approve('exec', chmod), approve('exec', cp), approve('exec', 'chmod 755 f1')] }));
    assert.equal(result.success, true, result.error);
    assert.deepEqual((splitJson(result.response) as string[][]).map((v) => v[0]), ['denied', 'denied', 'approved']);
    assert.deepEqual(asked, [chmod, cp]);
    assert.ok(rows[0]!.danger.includes('unread-landing') && rows[1]!.danger.includes('unread-landing'));
  } finally {
    await t.close();
  }
});
