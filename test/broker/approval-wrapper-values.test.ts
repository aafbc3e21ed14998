/**
 * A wrapper the danger reading does not look through was read from its first word that is no
 * option (and the next): an option of two values, or a value then the wrapper's own word, hid the
 * command from the tags (`bwrap --bind / / rm -rf ~`, `tmux new -s x rm -rf ~`, `chroot --userspec
 * u:g / rm -rf /home`: runs-command only). bwrap, tmux and chroot are now read as their parsers
 * read them (`wrapper-values.ts`). tmux runs the command for real here (its own socket, killed).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ApprovalRules, dangerTags, vouchedContext } from '../../main/broker/approvals/index.js';
import { until } from './helpers.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder, and tmux run there on a socket of its own (no configuration file). */
function tmuxIn(): { ws: string; tmux: (...args: string[]) => void } {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'approval-wrapper-values-')));
  dirs.push(ws);
  const socket = join(ws, 'tmux.sock');
  return { ws, tmux: (...args) => void spawnSync('tmux', ['-S', socket, '-f', '/dev/null', ...args], { cwd: ws, stdio: 'ignore', timeout: 30_000 }) };
}

it('tmux new -s x rm -rf ~ runs rm: the command after the flags and their values is read', { timeout: 180_000 }, async () => {
  const { ws, tmux } = tmuxIn();
  try {
    tmux('new', '-d', '-s', 'x', '-x', '80', 'touch', join(ws, 'M'));
    await until(() => existsSync(join(ws, 'M')), 'tmux ran the command after -s x');
    // tmux finds a command by a prefix of its name.
    tmux('new-sess', '-d', '-s', 'y', '-x', '80', 'touch', join(ws, 'N'));
    await until(() => existsSync(join(ws, 'N')), 'tmux new-sess ran the command after -s y');
  } finally {
    tmux('kill-server');
  }
  for (const line of ['tmux new -s x rm -rf ~', 'tmux new -d -s x -n w rm -rf ~', 'tmux -L sock new-session -sx -c /tmp rm -rf ~', 'tmux neww -t x:1 rm -rf ~', 'tmux splitw -l 10 -t x rm -rf ~', "tmux -c 'rm -rf ~'", 'tmux new-sess -s x rm -rf ~', 'tmux new-w -t x rm -rf ~', 'tmux split -l 10 -t x rm -rf ~', 'tmux respawn-w -k -t x rm -rf ~', 'tmux respawn-p -t x rm -rf ~', 'bwrap --bind / / rm -rf ~', 'bwrap --ro-bind /usr /usr --proc /proc --dev /dev --unshare-all --setenv A b --overlay a b c rm -rf ~', 'bwrap --bind / / -- rm -rf ~', 'chroot --userspec u:g / rm -rf /home', 'chroot --user u:g --groups g / rm -rf /home', 'chroot --userspec=u:g / rm -rf /home']) {
    const tags = dangerTags('exec', line, ws);
    assert.ok(tags.includes('recursive-delete') && tags.includes('runs-command'), `${line}: ${tags.join(',')}`);
  }
  // The command is named as what the wrapper may run.
  const runs = vouchedContext('exec', 'bwrap --bind / / rm -rf ~', undefined, ws, undefined).runs ?? [];
  assert.ok(runs.some(({ program, line }) => program === 'bwrap' && line === 'rm -rf ~'), JSON.stringify(runs));
  // What runs nothing dangerous stays so.
  for (const line of ['tmux new -s x make test', 'bwrap --bind / / ls', 'chroot --userspec u:g / ls']) assert.ok(!dangerTags('exec', line, ws).includes('recursive-delete'), line);
});

/**
 * A table of the reading looked a word of the line up as a plain object's key, which also finds
 * what every object inherits: `tmux toString -x` and `git constructor -x` took a function for the
 * command's value letters and the danger reading threw (the request failed with no audit row).
 */
it('a word every object inherits (toString, constructor) is no entry of a table', () => {
  for (const line of ['tmux toString -x', 'tmux constructor -x', 'tmux __proto__ -x']) assert.deepEqual(dangerTags('exec', line, undefined), ['runs-command'], line);
  for (const line of ['git constructor -x', 'git toString -x', 'git -C . valueOf -x', 'git hasOwnProperty -x']) assert.deepEqual(dangerTags('exec', line, undefined), [], line);
});

/**
 * e969e85's known limits: tmux runs its commands one after another (`\;`, a word ending in `;`),
 * `run`, `if` and `pipep` run a shell line (`run -C` and `if`'s commands are tmux commands), and
 * unshare, nsenter and systemd-run take options of a value before the command (read by
 * getopt_long, `+`). Each hid what ran after a first command, or after two options' values, from
 * the tags (runs-command only). tmux runs its sequences for real here (its own socket, killed).
 */
it("tmux's command sequences and the lines of run, if and pipep; unshare, nsenter and systemd-run options of a value", { timeout: 180_000 }, async () => {
  const { ws, tmux } = tmuxIn();
  try {
    tmux('new', '-d', '-s', 'x', '-x', '80', 'sleep 120', ';', 'neww', '-n', 'w', 'touch', join(ws, 'A'));
    await until(() => existsSync(join(ws, 'A')), 'tmux ran neww after ;');
    tmux('if-shell', 'true', `run-shell "touch ${join(ws, 'B')}"`);
    await until(() => existsSync(join(ws, 'B')), "tmux ran if-shell's command");
    tmux('run', '-C', `neww -d touch ${join(ws, 'C')}`);
    await until(() => existsSync(join(ws, 'C')), 'tmux ran run -C as a tmux command');
  } finally {
    tmux('kill-server');
  }
  for (const line of [
    'tmux new -d true \\; neww -n w rm -rf ~',
    'tmux new -d true\\; neww -n w rm -rf ~',
    `tmux if-shell true 'run-shell "rm -rf ~"'`,
    "tmux if -F 1 'neww -n w rm -rf ~'",
    "tmux run -C 'neww -n w rm -rf ~'",
    'tmux popup -T t -d /tmp rm -rf ~',
    'unshare --propagation private --setgroups deny rm -rf ~',
    'unshare --prop private --setg deny rm -rf ~',
    'unshare -R / -w /tmp rm -rf ~',
    'nsenter -t 1 -S u -G g rm -rf ~',
    'systemd-run --unit x --description y rm -rf ~',
    'systemd-run -u x -p A=b --slice s rm -rf ~',
  ]) {
    const tags = dangerTags('exec', line, ws);
    assert.ok(tags.includes('recursive-delete') && tags.includes('runs-command'), `${line}: ${tags.join(',')}`);
  }
  // An optional value is glued or none: `-Ut` is -U's file t, rm the command.
  assert.ok(dangerTags('exec', 'nsenter -Ut rm -rf ~', ws).includes('recursive-delete'));
  // What runs nothing dangerous stays so; a `\;` kept in a word is no separator.
  for (const line of ['tmux new -d make \\; neww -n w make test', 'unshare -R / -w /tmp ls', "tmux new -d 'x\\;' neww rm -rf ~"]) assert.ok(!dangerTags('exec', line, ws).includes('recursive-delete'), line);
});

/**
 * What 979b2a1 left unread in a tmux line (tmux-unread.ts): tmux's default aliases (`splitp`,
 * `split-pane`) hid the command behind two values; a command string tmux parses itself (`if`'s
 * commands, `run -C`) separates commands at `;` and new lines, which the shell reading of `tmux …`
 * took for a program of its own; a format's `#(…)` runs a shell command (`run '#(…)'`, a
 * window's name); `send-keys` types into a shell; `set-hook`, `default-command`, `bind-key`,
 * `command-prompt`, `confirm-before` run a command later. Each ran for real here while it was
 * runs-command only, with "always" offered for the exact line. The first are now read; the others
 * are unread-landing: asked each time, nothing offered, no rule approves them.
 */
it('tmux: default aliases, command strings split at ; and new lines, formats, send-keys and commands run later', { timeout: 180_000 }, async () => {
  const { ws, tmux } = tmuxIn();
  const marker = (name: string): string => join(ws, name);
  try {
    tmux('new', '-d', '-s', 'x', '-x', '80', 'sleep 120');
    tmux('splitp', '-l', '5', '-t', 'x', 'touch', marker('A'));
    tmux('if', 'true', `neww -d true ; neww -d touch ${marker('B')}`);
    tmux('if', 'true', `neww -d true\nneww -d touch ${marker('C')}`);
    tmux('run', '-C', `neww -d true ; neww -d touch ${marker('D')}`);
    tmux('neww', '-d', '-n', 'w', 'sh', ';', 'send', '-t', 'w', `touch ${marker('F')}`, 'Enter');
    tmux('set-hook', '-g', 'after-new-window', `run "touch ${marker('G')}"`, ';', 'neww', '-d', 'sleep 5');
    tmux('set', '-g', 'default-command', `touch ${marker('H')}`, ';', 'neww', '-d');
    // A `#()` job belongs to the client whose command started it, and tmux kills it when that
    // client exits: the command-line client of `run` may be gone before sh has run touch (about
    // 1 in 5 here, and CI failed on it). Each look that finds no E asks again.
    const runE = (): boolean => (tmux('run', `#(touch ${marker('E')})`), false);
    for (const name of ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H']) await until(() => existsSync(marker(name)) || (name === 'E' && runE()), `tmux ran the command of case ${name}`);
  } finally {
    tmux('kill-server');
  }
  // Read: rm is seen.
  for (const line of ['tmux splitp -l 10 -t x rm -rf ~', 'tmux split-pane -l 10 -t x rm -rf ~', "tmux if true 'neww -d true ; neww -d rm -rf ~'", "tmux if true 'neww -d true\nneww -d rm -rf ~'", "tmux run -C 'neww -d true ; neww -d rm -rf ~'"]) {
    const tags = dangerTags('exec', line, ws);
    assert.ok(tags.includes('recursive-delete') && tags.includes('runs-command'), `${line}: ${tags.join(',')}`);
  }
  // Not read: unread-landing, nothing offered, not even an exact rule approves it.
  for (const line of [
    "tmux run '#(rm -rf ~)'",
    "tmux display -p '#(rm -rf ~)'",
    "tmux neww -d -n '#(rm -rf ~)' sleep 30",
    "tmux neww -d -n w sh \\; send -t w 'rm -rf ~' Enter",
    "tmux set-hook -g after-new-window 'run \"rm -rf ~\"' \\; neww -d",
    "tmux set -g default-command 'rm -rf ~' \\; neww -d",
    'tmux bind-key x neww rm -rf ~',
    "tmux command-prompt -I x 'neww %%'",
    "tmux confirm 'neww rm -rf ~'",
    'tmux source-file x.conf',
    'tmux -f x.conf new -d',
    "tmux if true 'display -p \"$X\"'",
  ]) {
    const context = vouchedContext('exec', line, undefined, ws, undefined);
    assert.ok(context.danger.includes('unread-landing') && context.danger.includes('runs-command'), `${line}: ${context.danger.join(',')}`);
    assert.deepEqual(context.proposals, [], line);
    const rules = new ApprovalRules();
    rules.add({ effect: 'allow', kind: 'exec', agent: 'coder', match: { exact: line } });
    assert.equal(rules.decide({ kind: 'exec', command_or_path: line, workspace: ws, role: 'coder', hidden: false, danger: context.danger }), undefined, line);
  }
  // What tmux runs nothing from, or the reading reads whole, stays as it was.
  for (const line of ['tmux kill-server', 'tmux ls', 'tmux new -d -s x make test', "tmux if true 'neww -d make'", 'tmux -f /dev/null new -d make', 'tmux toString -x']) {
    assert.ok(!dangerTags('exec', line, ws).includes('unread-landing'), line);
  }
});

/**
 * tmux's `-C` (control mode) reads tmux commands from its input, one a line, and runs them:
 * `printf 'run-shell "…"\n' | tmux -C attach` and `tmux -C attach < cmds` ran their command for real
 * while the line was runs-command only, "always" offered for the exact line, and a deny `rm *` did
 * not see `rm` in it. What it runs is not on the line: unread-landing, which a deny rule fails closed on.
 */
it('tmux -C (control mode) runs the tmux commands of its input: unread-landing, nothing offered, a deny rule asks', { timeout: 180_000 }, async () => {
  const { ws, tmux } = tmuxIn();
  const socket = join(ws, 'tmux.sock');
  const control = (input: string, ...flags: string[]): void =>
    void spawnSync('tmux', ['-S', socket, '-f', '/dev/null', ...flags, 'attach', '-t', 'x'], { cwd: ws, input, stdio: ['pipe', 'ignore', 'ignore'], timeout: 30_000 });
  try {
    tmux('new', '-d', '-s', 'x', '-x', '80', 'sleep 120');
    control(`run-shell "touch ${join(ws, 'A')}"\n`, '-C');
    control(`neww -d "touch ${join(ws, 'B')}"\n`, '-2C');
    for (const name of ['A', 'B']) await until(() => existsSync(join(ws, name)), `tmux ran the command read in control mode (${name})`);
  } finally {
    tmux('kill-server');
  }
  for (const line of [`printf 'run-shell "rm -rf ~"\\n' | tmux -C attach -t x`, 'tmux -C attach -t x < cmds', 'tmux -CC new -A -s x < cmds', 'tmux -2C new < cmds']) {
    const context = vouchedContext('exec', line, undefined, ws, undefined);
    assert.ok(context.danger.includes('unread-landing') && context.danger.includes('runs-command'), `${line}: ${context.danger.join(',')}`);
    assert.deepEqual(context.proposals, [], line);
    const rules = new ApprovalRules();
    rules.add({ effect: 'allow', kind: 'exec', agent: 'coder', match: { exact: line } });
    const deny = rules.add({ effect: 'deny', kind: 'exec', agent: 'coder', match: { prefix: 'rm' } });
    assert.deepEqual(rules.decide({ kind: 'exec', command_or_path: line, workspace: ws, role: 'coder', hidden: false, danger: context.danger }), { effect: 'ask', rule: deny }, line);
  }
  // tmux's other flags stay plain.
  assert.ok(!dangerTags('exec', 'tmux -2u new -d make', ws).includes('unread-landing'));
});
