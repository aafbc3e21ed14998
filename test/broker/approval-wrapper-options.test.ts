/**
 * A wrapper the danger reading looks through (`nice`, `stdbuf`, `env`, `flock`, `time`, `timeout`,
 * `busybox`…) has its options read as its getopt reads them: a value taken for the program hid
 * what ran after it (`stdbuf -o L env -S 'rm -rf ~'` was runs-command only), env's `-S` in a
 * cluster, shortened or after `-u NAME` was not seen, flock's `-c` line was not read, GNU time's
 * `-o` file was not a write, and toybox was no wrapper at all (`toybox *` was offered). Each line
 * is run by real bash (where the tool is here) and leaves a marker file: what it runs is real.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ApprovalRules, dangerTags, vouchedContext } from '../../main/broker/approvals/index.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function workspace(): string {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'approval-wrapper-options-')));
  dirs.push(ws);
  return ws;
}

/** Runs `line` with bash in `ws`, HOME there too, and says whether it left `file`. */
function leaves(line: string, ws: string, file = 'M'): boolean {
  rmSync(join(ws, file), { force: true });
  spawnSync('bash', ['-c', line], { cwd: ws, stdio: 'ignore', timeout: 60_000, env: { ...process.env, HOME: ws } });
  return existsSync(join(ws, file));
}

it("env's -S string is found as env's getopt finds it: in a cluster, shortened, after an option's value", { timeout: 180_000 }, () => {
  const ws = workspace();
  for (const line of ["env -vS 'touch M'", "env --sp='touch M'", "env -u X -S 'touch M'", "env --split 'touch M'"]) assert.ok(leaves(line, ws), `real env ran ${line}`);
  for (const line of ["env -vS 'rm -rf ~'", "env --sp='rm -rf ~'", "env -u X -S 'rm -rf ~'", "env --split 'rm -rf ~'", "env -i -C /tmp -S 'rm -rf ~'"]) {
    const tags = dangerTags('exec', line, ws);
    assert.ok(tags.includes('recursive-delete'), `${line}: ${tags.join(',')}`);
  }
});

it("a looked-through wrapper's option that takes a value is not taken for the program", { timeout: 180_000 }, () => {
  const ws = workspace();
  for (const line of ["stdbuf -o L env -S 'touch M'", "nice --adjustment 5 env -S 'touch M'", "flock -w 5 lockf env -S 'touch M'", "flock lockf -c 'touch M'", "timeout -v 30 env -S 'touch M'", "ionice --class 2 env -S 'touch M'"]) {
    assert.ok(leaves(line, ws), `real bash ran ${line}`);
  }
  for (const line of ["stdbuf -o L env -S 'rm -rf ~'", "stdbuf --output L env -S 'rm -rf ~'", "nice --adjustment 5 env -S 'rm -rf ~'", "nice --adj 5 env -S 'rm -rf ~'", "flock -w 5 lockf env -S 'rm -rf ~'", "flock lockf -c 'rm -rf ~'", "flock lockf --command='rm -rf ~'", "ionice --class 2 env -S 'rm -rf ~'", "xargs --max-procs 4 env -S 'rm -rf ~'"]) {
    const tags = dangerTags('exec', line, ws);
    assert.ok(tags.includes('recursive-delete') && tags.includes('runs-command'), `${line}: ${tags.join(',')}`);
  }
  // flock's line is named as what flock may run.
  assert.deepEqual(vouchedContext('exec', "flock lockf -c 'rm -rf ~'", undefined, ws, undefined).runs, [{ program: 'flock', line: 'rm -rf ~' }]);
});

it("GNU time's -o names a file it writes", { timeout: 180_000 }, () => {
  const ws = workspace();
  assert.ok(leaves('command time -o .bashrc true', ws, '.bashrc'), 'real time wrote the file');
  for (const line of ['time -o ~/.bashrc true', 'command time -o ~/.bashrc true', 'command time --output=~/.bashrc true', '/usr/bin/time -ao ~/.bashrc true']) {
    const tags = dangerTags('exec', line, ws);
    assert.ok(tags.includes('shell-dotfile'), `${line}: ${tags.join(',')}`);
  }
});

it('toybox runs its applets as busybox does: read through, never offered as a prefix', () => {
  const ws = workspace();
  const context = vouchedContext('exec', "toybox sh -c 'rm -rf ~'", undefined, ws, undefined);
  assert.ok(context.danger.includes('recursive-delete') && context.danger.includes('runs-command'), context.danger.join(','));
  assert.deepEqual(vouchedContext('exec', 'toybox ls -l', undefined, ws, undefined).proposals, [{ exact: 'toybox ls -l' }]);
  const rules = new ApprovalRules();
  rules.add({ effect: 'allow', kind: 'exec', agent: 'coder', match: { prefix: 'toybox' } });
  const line = "toybox sh -c 'touch M'";
  assert.equal(rules.decide({ kind: 'exec', command_or_path: line, workspace: ws, role: 'coder', hidden: false, danger: dangerTags('exec', line, ws) })?.effect, undefined);
});

/**
 * env splits its -S string by its own rules, not a shell's: `\_` separates words outside double
 * quotes, `\c` ends the string, `${NAME}` is expanded, and the words are env's options again
 * (`-S '-i rm …'`, `-S-i rm …`). Read as a shell line, `rm\_-rf\_x` was one word naming no program:
 * runs-command only. xargs' `--max-lines` takes a value only after `=`: the word after it is the command.
 */
it("env's -S string is split by env's own escapes and its options read again; xargs --max-lines takes no next word", { timeout: 180_000 }, () => {
  const ws = workspace();
  for (const line of ["env -S '' touch M", "env -S 'touch\\_M'", "env -S '-i touch\\_M'", 'env -S-i touch M', "env -S 'touch\\_M\\c; junk'", "env -S 'touch\\_${HOME}/M'", "echo | xargs --max-lines env -S 'touch M'"]) {
    assert.ok(leaves(line, ws), `real bash ran ${line}`);
  }
  for (const line of ["env -S '' rm -rf ~", 'env -S "" -i rm -rf ~', "env -S 'rm\\_-rf\\_~'", "env -S '-i rm -rf ~'", 'env -S-i rm -rf ~', "env -S '-u X rm\\_-rf ~'", "env -S 'rm\\_-rf\\_${HOME}'", "xargs --max-lines env -S 'rm -rf ~'", "xargs --max-l env -S 'rm -rf ~'"]) {
    const tags = dangerTags('exec', line, ws);
    assert.ok(tags.includes('recursive-delete') && tags.includes('runs-command'), `${line}: ${tags.join(',')}`);
  }
  // Inside double quotes `\_` is a space, in the one word: no program `rm`.
  assert.ok(!dangerTags('exec', 'env -S \'"rm\\_-rf\\_x"\'', ws).includes('recursive-delete'));
});
