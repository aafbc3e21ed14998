/**
 * `gateway-config` is set both when a line surely reaches the gateway's own files (`cp x
 * ~/.config/chatty/approvals.json`) and when it only may (`echo [] > $OUT`: a variable, a folder
 * the gateway cannot place, a file's name in an interpreter's code). Both roots said the same
 * words for both: "it reaches the gateway's own configuration", of a line whose target no one
 * knows. The request now says which of its tags are unsure (`unsure`), and each root says MAY for
 * those. Real files, the real reading of the request and the terminal prompt's real lines.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { ConfigPlaces, vouchedContext, type DangerTag } from '../../main/broker/approvals/index.js';
import { approvalDetails } from '../../main/cli/terminal-root/describe.js';
import type { ApprovalRequest } from '../../main/index.js';

let home = '';
let config: ConfigPlaces;
const savedHome = process.env['HOME'];
before(() => {
  home = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-config-maybe-')));
  mkdirSync(join(home, '.config', 'chatty'), { recursive: true });
  writeFileSync(join(home, '.config', 'chatty', 'approvals.json'), '{"version":1,"rules":[]}');
  mkdirSync(join(home, 'proj'));
  process.env['HOME'] = home;
  config = new ConfigPlaces([join(home, '.config', 'chatty', 'approvals.json')]);
});
after(() => {
  if (savedHome === undefined) delete process.env['HOME'];
  else process.env['HOME'] = savedHome;
  rmSync(home, { recursive: true, force: true });
});

/** `line`'s request (asked in `ws`) carries every one of `tags` and offers nothing to remember. */
function assertTaggedNothingOffered(line: string, ws: string, tags: readonly DangerTag[]): void {
  const context = vouchedContext('exec', line, undefined, ws, undefined, config);
  for (const tag of tags) assert.ok(context.danger.includes(tag), `${line}: ${context.danger.join(', ')}`);
  assert.deepEqual(context.proposals, [], line);
}

const MAYBE = [
  'echo [] > $OUT',
  'echo [] > "$(cat where)"',
  'cd "$D" && cp x chatty/approvals.json',
  `python3 -c "open('approvals.json','w')"`,
  'tar xf x.tar -C "$DEST"',
  'cp x ~nosuchuser-chatty/.config/chatty/approvals.json',
];
const SURELY = [
  'cp x ~/.config/chatty/approvals.json',
  'echo [] > ~/.config/chatty/approvals.json',
  'rm -rf ~/.config/chatty',
  'tar xf x.tar -C ~/.config/chatty',
  // Surely and maybe on one line: surely wins.
  'echo [] > $OUT; cp x ~/.config/chatty/approvals.json',
  'cd .. && cp x .config/chatty/approvals.json',
  // A variable set to one of the files on the line (bash expands `~` after the `=`): the word names it.
  'X=~/.config/chatty/approvals.json; cp x $X',
];

it('a line whose target the gateway cannot read is tagged gateway-config as unsure; one that surely reaches it is not', () => {
  const ws = join(home, 'proj');
  for (const line of MAYBE) {
    const context = vouchedContext('exec', line, undefined, ws, undefined, config);
    assert.ok(context.danger.includes('gateway-config'), line);
    assert.deepEqual(context.unsure, ['gateway-config'], line);
  }
  for (const line of SURELY) {
    const context = vouchedContext('exec', line, undefined, ws, undefined, config);
    assert.ok(context.danger.includes('gateway-config'), line);
    assert.equal(context.unsure, undefined, line);
  }
  const write = vouchedContext('write', '../.config/chatty/approvals.json', undefined, ws, undefined, config);
  assert.ok(write.danger.includes('gateway-config'));
  assert.equal(write.unsure, undefined);
});

it('the terminal prompt says a line MAY reach the gateway\'s own configuration when its target is unknown, and that it reaches it when it surely does', () => {
  const ws = join(home, 'proj');
  const request = (line: string): ApprovalRequest => ({ kind: 'exec', command_or_path: line, asker: { agent: 'coder-0', chain: ['root', 'coder'] }, role: 'coder', ...vouchedContext('exec', line, undefined, ws, undefined, config) });
  const maybe = approvalDetails(request('echo [] > $OUT')).join('\n');
  assert.match(maybe, /!! DANGER: gateway-config \(maybe\)/);
  assert.match(maybe, /!! gateway-config: it MAY reach the gateway's own configuration/);
  assert.doesNotMatch(maybe, /it reaches the gateway's own configuration/);
  const surely = approvalDetails(request('cp x ~/.config/chatty/approvals.json')).join('\n');
  assert.match(surely, /!! DANGER: .*\bgateway-config$/m);
  assert.match(surely, /!! gateway-config: it reaches the gateway's own configuration/);
  assert.doesNotMatch(surely, /\(maybe\)|MAY /);
});

/*
 * `~` and `$HOME` were read as the gateway's home even on a line that sets HOME first: with the
 * workspace `~/proj`, `HOME=.. ; cp -r evil/chatty ~/.config/` merges a folder over the real
 * `~/.config/chatty` (bash: `~` is `$HOME`, now `..` of the workspace), read as
 * `~/proj/.config/chatty`: asked with only `outside-workspace`, an exact rule offered. A line that
 * sets HOME or XDG_CONFIG_HOME anywhere now has no home the gateway can place: a write spelt from
 * home is where it lands unread (`unread-landing`, nothing offered) and `gateway-config` (maybe)
 * when it could reach the gateway's files.
 */
it('a line that sets HOME reads ~ and $HOME as a home it cannot place: unread-landing, gateway-config (maybe), nothing offered', () => {
  const ws = join(home, 'proj');
  mkdirSync(join(ws, '.config'), { recursive: true });
  process.env['HOME'] = ws; // the gateway's home: the workspace; the rules live one folder up
  try {
    for (const line of [
      'HOME=.. ; cp -r evil/chatty ~/.config/',
      'HOME=.. cp -r evil/chatty ~/.config/',
      'export HOME=..; cp -r evil/chatty $HOME/.config/',
      `sh -c 'HOME=${home}; cp -r evil/chatty ~/.config'`,
      'XDG_CONFIG_HOME=../.config; cp -r evil/chatty $XDG_CONFIG_HOME/',
      'HOME=.. ; cd ~/.config && cp -r ../evil/chatty .',
    ]) {
      assertTaggedNothingOffered(line, ws, ['gateway-config']);
    }
    // The same line without HOME set: the gateway's own home, as before (its .config is the workspace's).
    const plain = vouchedContext('exec', 'cp -r evil/chatty ~/.config/', undefined, ws, undefined, config);
    assert.ok(!plain.danger.includes('gateway-config'), plain.danger.join(', '));
    assert.ok(!plain.danger.includes('unread-landing'), plain.danger.join(', '));
  } finally {
    process.env['HOME'] = home;
  }
});

/**
 * A builtin gets a variable's name after quote removal and brace expansion, or built at run time:
 * the line need never hold `HOME`. `printf -v HO\ME %s "$(dirname "$PWD")/.config"; cp evil/*
 * ~/c?atty/` overwrote ~/.config/chatty/approvals.json in real bash and was asked with
 * outside-workspace only and an exact rule offered (~ read as the gateway's home).
 */
it('a line that may set HOME under another spelling has no home the gateway can place', () => {
  const ws = join(home, 'proj');
  for (const line of [
    'printf -v HO\\ME %s "$(dirname "$PWD")/.config"; cp evil/* ~/c?atty/',
    `declare -n h=HO''ME; h=$(dirname "$PWD")/.config; cp evil/* ~/c?atty/`,
    'declare {HOME,X}=$(dirname "$PWD")/.config; cp evil/* ~/c?atty/',
    'declare H{O,}ME=$(dirname "$PWD")/.config; cp evil/* ~/c?atty/',
    'v=HO; declare ${v}ME=$(dirname "$PWD")/.config; cp evil/* ~/c?atty/',
    'set -a; . ./env; cp evil/* ~/c?atty/',
  ]) {
    assertTaggedNothingOffered(line, ws, ['unread-landing']);
  }
  // Not a dot that starts no command: `find . -name x` has the gateway's home.
  assert.deepEqual(vouchedContext('exec', 'find . -name x > ~/notes.txt', undefined, ws, undefined, config).danger, ['outside-workspace']);
});

/**
 * A sourced file may set HOME, and bash runs `.`/`source` wherever a program may stand, its name
 * quoted or not: `if . ./env; then …`, `X=1 . ./env`, `"source" ./env`, `\. ./env` were read with
 * ~ as the gateway's home (outside-workspace only, an exact rule offered); with ./env holding
 * HOME=~/.config each overwrote ~/.config/chatty/approvals.json in real bash. So did
 * `${XDG_CONFIG_HOME:=…}` (assigns when unset, the usual case) and `${!v:=…}` (assigns what $v names).
 */
it('a line that sources a file anywhere a program may stand, or assigns by ${NAME:=…}, has no home the gateway can place', () => {
  const ws = join(home, 'proj');
  const saved = process.env['XDG_CONFIG_HOME'];
  delete process.env['XDG_CONFIG_HOME'];
  try {
    for (const line of [
      'if . ./env; then cp evil/* ~/c?atty/; fi',
      'while . ./env; do cp evil/* ~/c?atty/; break; done',
      'x=1 . ./env; cp evil/* ~/c?atty/',
      '"source" ./env; cp evil/* ~/c?atty/',
      "sour''ce ./env; cp evil/* ~/c?atty/",
      '\\. ./env; cp evil/* ~/c?atty/',
      "'.' ./env; cp evil/* ~/c?atty/",
      `sh -c 'if . ./env; then cp evil/* ~/c?atty/; fi'`,
      ': ${XDG_CONFIG_HOME:=$(dirname "$PWD")/.config}; cp evil/* $XDG_CONFIG_HOME/c?atty/',
      'v=XDG_CONFIG_HO; v+=ME; : ${!v:=$(dirname "$PWD")/.config}; cp evil/* $XDG_CONFIG_HOME/c?atty/',
      // Element 0 is the variable: bash assigns XDG_CONFIG_HOME (seen by `echo`).
      ': ${XDG_CONFIG_HOME[0]:=$(dirname "$PWD")/.config}; cp evil/* $XDG_CONFIG_HOME/c?atty/',
      ': ${XDG_CONFIG_HOME[0]=$(dirname "$PWD")/.config}; cp evil/* $XDG_CONFIG_HOME/c?atty/',
    ]) {
      assertTaggedNothingOffered(line, ws, ['unread-landing']);
    }
    // `find . …` and `${HOME:-x}` set nothing: the gateway's home, as before.
    assert.deepEqual(vouchedContext('exec', 'find . -name x > ~/notes.txt', undefined, ws, undefined, config).danger, ['outside-workspace']);
    assert.deepEqual(vouchedContext('exec', 'echo ${HOME:-x} > ~/notes.txt', undefined, ws, undefined, config).danger, ['outside-workspace']);
  } finally {
    if (saved !== undefined) process.env['XDG_CONFIG_HOME'] = saved;
  }
});

/**
 * `~-` is `$OLDPWD`, `~+` `$PWD`, `~+1`/`~-1` the directory stack: a line sets them (`OLDPWD=…`,
 * `cd`, `pushd`). They were read as a plain relative name in the workspace: `OLDPWD=$(dirname
 * "$PWD")/.config; cp evil/* ~-/c?atty/` had no tag at all and an exact rule offered, and in real
 * bash overwrote ~/.config/chatty/approvals.json. They are folders the gateway cannot place.
 */
it('~-, ~+ and the directory stack are folders the gateway cannot place', () => {
  const ws = join(home, 'proj');
  for (const line of ['OLDPWD=$(dirname "$PWD")/.config; cp evil/* ~-/c?atty/', 'PWD=x; cp evil/* ~+/c?atty/', 'cp evil/* ~+1/c?atty/', 'cp evil/* ~-2/c?atty/']) {
    assertTaggedNothingOffered(line, ws, ['unread-landing', 'gateway-config']);
  }
});
