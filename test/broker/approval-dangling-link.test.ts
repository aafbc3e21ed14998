// A write through a link to what does not exist yet: realpath fails on a dangling link, so the
// request showed the path asked for, no `lands`, `outside: false`, no tags, while the kernel's
// open(O_CREAT) follows the link and creates its target outside the workspace. Where it lands is
// now read link by link (readlink): the write is shown landing where the kernel creates it.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import type { AuditRow } from '../../main/index.js';
import { vouchedContext } from '../../main/broker/approvals/index.js';
import { plan, splitJson, startBroker } from './helpers.js';

let root = '';
let ws = '';
let away = '';
before(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'approval-dangling-')));
  ws = join(root, 'ws');
  away = join(root, 'away');
  mkdirSync(ws);
  mkdirSync(away);
  symlinkSync('../away/new.sh', join(ws, 'dangling')); // relative, its folder exists
  symlinkSync('../away/fresh.sh', join(ws, 'fresh')); // the same, for the broker's test (the first writes through its own)
  symlinkSync(join(away, 'autostart.md'), join(ws, 'notes.md')); // absolute
  symlinkSync('hop2', join(ws, 'hop1')); // a chain: hop1 -> hop2 -> ../away/chained
  symlinkSync('../away/chained', join(ws, 'hop2'));
  symlinkSync(join(ws, '.git-hooks-pre-commit'), join(ws, 'inside')); // dangling, inside the workspace
  symlinkSync('loop-b', join(ws, 'loop-a'));
  symlinkSync('loop-a', join(ws, 'loop-b'));
  mkdirSync(join(ws, '.git/hooks'), { recursive: true });
  symlinkSync('.git/hooks/pre-commit', join(ws, 'hook')); // dangling into the hooks folder
});
after(() => rmSync(root, { recursive: true, force: true }));

it('a write through a dangling link lands where the kernel creates its target: lands, outside, tags', () => {
  const context = vouchedContext('write', 'dangling', undefined, ws, undefined);
  assert.equal(context.path, join(ws, 'dangling'));
  assert.equal(context.lands, join(away, 'new.sh'));
  assert.equal(context.outside, true);
  assert.deepEqual(context.danger, ['outside-workspace']);
  writeFileSync(join(ws, 'dangling'), 'echo hi\n'); // what the kernel does with it
  assert.ok(existsSync(join(away, 'new.sh')));

  assert.equal(vouchedContext('write', 'notes.md', undefined, ws, undefined).lands, join(away, 'autostart.md'));
  const chained = vouchedContext('write', 'hop1', undefined, ws, undefined);
  assert.equal(chained.lands, join(away, 'chained'));
  assert.deepEqual(chained.danger, ['outside-workspace']);
  const hook = vouchedContext('write', 'hook', undefined, ws, undefined);
  assert.equal(hook.lands, join(ws, '.git/hooks/pre-commit'));
  assert.deepEqual(hook.danger, ['vcs-hook']);
  const inside = vouchedContext('write', 'inside', undefined, ws, undefined);
  assert.equal(inside.lands, join(ws, '.git-hooks-pre-commit'));
  assert.equal(inside.outside, false);
  // A loop of links: the kernel gives up (ELOOP); where it lands is not read, and no rule approves it.
  assert.deepEqual(vouchedContext('write', 'loop-a', undefined, ws, undefined).danger, ['unread-landing']);
});

it('a deny glob on where a dangling link lands holds under --approvals allow (real broker)', async () => {
  const t = startBroker(['coder'], { root: { workspaceRoot: ws } });
  try {
    t.root.onApproval(() => ({ verdict: 'approved', by: 'mode:allow' }));
    t.broker.human.rules.add({ effect: 'deny', kind: 'write', agent: '*', match: { glob: join(away, '**') } });
    const rows: AuditRow[] = [];
    t.broker.human.audit.subscribe((row) => rows.push(row));
    const result = await t.root.invoke('coder', plan({ seq: [{ approve: { kind: 'write', command_or_path: 'notes.md' } }, { approve: { kind: 'write', command_or_path: 'fresh' } }] }));
    assert.deepEqual((splitJson(result.response) as string[][]).map((v) => v[0]), ['denied', 'denied']);
    assert.match(String(rows[0]?.by), /^rule:/);
    assert.equal(rows[1]?.lands, join(away, 'fresh.sh'));
    assert.ok(!existsSync(join(away, 'fresh.sh')));
  } finally {
    await t.close();
  }
});
