// A deny exec rule against the command lines a wrapper or an option runs (the request's `runs`):
// `tmux new -d 'rm -rf ~'`, `ssh host 'rm -rf ~'`, `tar --to-command='rm -rf ~'` ran under
// --approvals allow though a deny rule `rm *` stood and the reading had found the line they run.
// A line that was not read (past the reading's budget, a command run only in part) fails closed.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { AuditRow } from '../../main/index.js';
import { plan, splitJson, startBroker } from './helpers.js';

const approve = (command: string) => ({ approve: { kind: 'exec' as const, command_or_path: command } });

/** Each line approved under --approvals allow (the mode's answer), with `rules` added: the verdicts and who decided. */
async function underAllow(rules: { prefix: string } | { exact: string }, lines: readonly string[]): Promise<{ id: string; verdicts: string[]; rows: AuditRow[] }> {
  const t = startBroker(['coder']);
  try {
    t.root.onApproval(() => ({ verdict: 'approved', by: 'mode:allow' }));
    const rule = t.broker.human.rules.add({ effect: 'deny', kind: 'exec', agent: '*', match: rules });
    const rows: AuditRow[] = [];
    t.broker.human.audit.subscribe((row) => rows.push(row));
    const result = await t.root.invoke('coder', plan({ seq: lines.map(approve) }));
    assert.equal(result.success, true, result.error);
    return { id: rule.id, verdicts: (splitJson(result.response) as string[][]).map((v) => v[0]!), rows };
  } finally {
    await t.close();
  }
}

it('a deny prefix rm covers what tmux, ssh, watch, flock, setsid, tar, git, rsync, make and find -exec run from their words; their harmless lines are approved', async () => {
  const denied = [
    "tmux new -d 'rm -rf ~'",
    "tmux new -d \"sh -c 'rm -rf ~'\"",
    "ssh host 'rm -rf ~'",
    "nice ssh -p 22 host 'cd / && rm -rf ~'",
    "watch -n1 'date; rm -rf ~'",
    "flock /tmp/lock -c 'rm -rf ~'",
    "setsid tar --to-command='rm -rf ~' -xf x.tar",
    "timeout 5 tmux new -d \"sh -c 'rm -rf ~'\"",
    "tar -xf x.tar --to-command='rm -rf ~'",
    "git -c core.pager='rm -rf ~' log",
    "rsync -e 'rm -rf ~' a host:b",
    "make test CC='rm -rf ~'",
    "find . -name x -exec tar --to-command='rm -rf ~' -xf {} ';'",
  ];
  const approved = ["tmux new -d 'ls -la'", 'ssh host uptime', "tar --to-command='cat' -xf x.tar", 'git -c core.pager=less log'];
  const { id, verdicts, rows } = await underAllow({ prefix: 'rm' }, [...denied, ...approved]);
  assert.deepEqual(verdicts, [...denied.map(() => 'denied'), ...approved.map(() => 'approved')]);
  assert.deepEqual(rows.map((row) => row.by), [...denied.map(() => `rule:${id}`), ...approved.map(() => 'mode:allow')]);
});

it('a deny exact make deploy covers ssh host and tmux and tar lines that run make deploy; make build there is approved', async () => {
  const denied = ["ssh host 'make deploy'", "tmux new -d 'cd app && make deploy'", "tar --to-command='make deploy' -xf x.tar"];
  const approved = ["ssh host 'make build'"];
  const { id, verdicts, rows } = await underAllow({ exact: 'make deploy' }, [...denied, ...approved]);
  assert.deepEqual(verdicts, ['denied', 'denied', 'denied', 'approved']);
  assert.deepEqual(rows.map((row) => row.by), [...denied.map(() => `rule:${id}`), 'mode:allow']);
});

it('a line a wrapper or option runs that was not read (past the reading budget, vim -c, tmux send-keys) is denied by any deny rule under --approvals allow', async () => {
  // 80 distinct ssh lines, each charged 64 characters of the 4,096 read: the last ones are not read.
  const many = Array.from({ length: 80 }, (_, i) => `ssh h 'echo ${i}'`).join('; ');
  // tmux types `rm -rf ~⏎` into the window's shell, key by key: no word of it is rm.
  const lines = [`${many}; ssh h 'rm -rf ~'`, 'vim -c \'call system("rm -rf ~")\' notes.txt', "tmux send-keys -t w r m Space - r f Space '~' Enter"];
  const { id, verdicts, rows } = await underAllow({ prefix: 'rm' }, lines);
  assert.deepEqual(verdicts, ['denied', 'denied', 'denied']);
  assert.deepEqual(rows.map((row) => row.by), lines.map(() => `rule:${id}`));
  for (const row of rows) assert.ok(row.danger.includes('unread-landing'), row.command_or_path);
});
