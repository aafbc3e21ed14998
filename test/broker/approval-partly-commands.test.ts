/**
 * An option's value that is a command only in part (an ex command line that may shell out: `vim
 * -c 'silent !…'`, `call system(…)`; makefile text: `make --eval='x: ; …'`; tar's old-style `xIf
 * prog`, whose letters take the next words in order) was runs-command, and "always" was offered for
 * the exact line with its command unread: a remembered rule approved whatever it held. Such a line
 * is now unread-landing too: asked each time, nothing offered to remember, no rule approves it.
 * What is read whole stays as it was (`vim -c '!cmd'` is read as that command line; `vim +10 f`).
 * vim's words are read as vim reads them (`-ccmd`, `-esc cmd`), a search is plain only with
 * nothing after it (`-c '/x/|call system(…)'` ran), and a make variable whose value make expands
 * (`X:=$(shell …)`) is makefile text too.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ApprovalRules, dangerTags, vouchedContext } from '../../main/broker/approvals/index.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function workspace(): string {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'approval-partly-commands-')));
  dirs.push(ws);
  writeFileSync(join(ws, 'f'), 'hi\n');
  writeFileSync(join(ws, 's.sh'), 'touch M\n');
  execFileSync('tar', ['-cf', 'x.tar', 'f'], { cwd: ws });
  return ws;
}

/** Runs `line` with bash in `ws` (no terminal, no input) and says whether it left the marker file `M`. */
function leavesMarker(line: string, ws: string): boolean {
  rmSync(join(ws, 'M'), { force: true });
  // SHELL as a login sets it: make's `$(shell …)` in a command-line variable runs through $SHELL, and an
  // environment without one (CI's `env -i`) runs nothing there.
  spawnSync('bash', ['-c', line], { cwd: ws, stdio: 'ignore', timeout: 60_000, env: { ...process.env, SHELL: process.env.SHELL ?? '/bin/sh', HOME: ws } });
  return existsSync(join(ws, 'M'));
}

const PARTLY = [
  "vim -es -c 'silent !touch M' -c 'qa!'",
  "vim -es -c 'w !sh' -c 'qa!' s.sh",
  "vim -es -c 'call system(\"touch M\")' -c 'qa!'",
  "vim -es --cmd 'silent !touch M' -c 'qa!'",
  "vim -es '+silent !touch M' '+qa!'",
  "make --eval='x: ; touch M' x",
  "make -E 'x: ; touch M' x",
  "tar xIf 'sh -c \"touch M; cat >/dev/null\"' x.tar",
  // vim takes -c glued to its command and at the end of a cluster of letters; a search is an address a command may follow.
  "vim -es '-csilent !touch M' -c 'qa!'",
  "vim -esc 'call system(\"touch M\")' -c 'qa!'",
  "vim -es -c '/hi/|call system(\"touch M\")' -c 'qa!' f",
  "vim -es -c '/hi/!touch M' -c 'qa!' f",
  // make expands a variable's value: `:=` at once, as the makefile is read; and its name, whatever the definition.
  "make 'X:=$(shell touch M)'",
  "make '$(shell touch M)X=1'",
  "make 'X$(shell touch M)=1'",
  // vim by the name Debian installs it under (vi, ex, editor lead there).
  "vim.basic -es -c 'call system(\"touch M\")' -c 'qa!'",
];

it('an option value that is a command only in part is unread-landing: nothing offered, no rule approves it', { timeout: 180_000 }, () => {
  const ws = workspace();
  for (const line of PARTLY) assert.ok(leavesMarker(line, ws), `real bash ran ${line}`);
  for (const line of PARTLY) {
    const context = vouchedContext('exec', line, undefined, ws, undefined);
    assert.ok(context.danger.includes('unread-landing') && context.danger.includes('runs-command'), `${line}: ${context.danger.join(',')}`);
    assert.deepEqual(context.proposals, [], line);
    const rules = new ApprovalRules();
    rules.add({ effect: 'allow', kind: 'exec', agent: 'coder', match: { exact: line } });
    assert.equal(rules.decide({ kind: 'exec', command_or_path: line, workspace: ws, role: 'coder', hidden: false, danger: context.danger })?.effect, undefined, line);
  }
});

it('what is read whole, or runs nothing, is not unread-landing', () => {
  const ws = workspace();
  for (const line of ["vim -c '!rm -rf ~'", "vim -u NONE -es -c '!touch M' -c q", "vim -es -c 'qa!' f", 'vim -c wq f', 'vim +10 f', 'vim +/needle f', 'vim +/needle/ f', "vim -c '?x?' f", 'vim + f', "vim '-c!rm -rf ~'", 'vim -- -cx', 'make test', "make CC='cc -O2' test", 'tar xf x.tar', 'tar -I zstd -xf x.tar']) {
    assert.ok(!dangerTags('exec', line, ws).includes('unread-landing'), `${line}: ${dangerTags('exec', line, ws).join(',')}`);
  }
  assert.ok(dangerTags('exec', "vim -c '!rm -rf ~'", ws).includes('recursive-delete'));
  // A command glued to -c is read as the spaced one (`-c!line` whole).
  assert.ok(dangerTags('exec', "vim '-c!rm -rf ~'", ws).includes('recursive-delete'));
  // vim under its other names is read as vim; a prefix rule of one approves no ex command.
  for (const name of ['vim.basic', 'vim.tiny', 'editor', 'gvim', 'rvim', 'vimx']) {
    assert.ok(dangerTags('exec', `${name} -c '!rm -rf ~'`, ws).includes('recursive-delete'), name);
    assert.ok(dangerTags('exec', `${name} -es -c 'call system("x")'`, ws).includes('unread-landing'), name);
    assert.deepEqual(dangerTags('exec', `${name} notes.txt`, ws), [], name);
    const rules = new ApprovalRules();
    rules.add({ effect: 'allow', kind: 'exec', agent: 'coder', match: { prefix: name } });
    assert.equal(rules.decide({ kind: 'exec', command_or_path: `${name} -c 'silent !x'`, workspace: ws, role: 'coder', hidden: false, danger: dangerTags('exec', `${name} -c 'silent !x'`, ws) })?.effect, undefined, name);
  }
});
