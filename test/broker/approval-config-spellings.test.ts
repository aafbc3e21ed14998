/**
 * Other spellings of a write of the gateway's own files, and of a write from home, than the ones
 * 7e80e79 read. Each was approved unasked by a rule a person plausibly remembered:
 * - a bracket glob (`approvals.js[o]n`, which the shell expands once the file exists), bash's braces
 *   (`{notes.json,.config/chatty/plugin-grants.json}`), an option glued to its value (`sort -oFILE`)
 *   or a folder option (`tar -C .config/chatty`): shell-quote gives `[…]` and `{…}` back as plain
 *   words, so a `cp`/`ln`/`tar`/`sort` prefix covered them and no word named the file as written;
 * - a second name of the rules file (a hard link in the workspace): a `**` glob approved its write,
 *   which rewrites the live rules file;
 * - a write spelt `~/x` or `$HOME/x` had no `lands`: an exact rule remembered when it was a plain
 *   file approved it once a link took it to `~/.ssh/authorized_keys`.
 * Real gateway, real workers; `serve`'s home is a temporary folder.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import type { NewApprovalRule } from '../../main/index.js';
import { askGateway } from './approval-ask.js';

let home = '';
const savedHome = process.env['HOME'];
before(() => {
  home = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-config-spellings-')));
  mkdirSync(join(home, '.config', 'chatty'), { recursive: true });
  for (const folder of ['proj', 'notes', '.ssh']) mkdirSync(join(home, folder));
  writeFileSync(join(home, '.ssh', 'authorized_keys'), 'ssh-ed25519 AAAA… me\n');
  process.env['HOME'] = home; // `~` is the gateway's home: this one
});
after(() => {
  if (savedHome === undefined) delete process.env['HOME'];
  else process.env['HOME'] = savedHome;
  rmSync(home, { recursive: true, force: true });
});

const rulesFile = (): string => join(home, '.config', 'chatty', 'approvals.json');

const ask = (workspace: string, rules: NewApprovalRule['match'][], kind: 'exec' | 'write', requests: string[], setUp?: () => void): ReturnType<typeof askGateway> => askGateway(home, workspace, rules, kind, requests, setUp);

it('a shell glob or brace that names the rules file is what the shell writes', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-config-sh-')));
  try {
    mkdirSync(join(dir, '.config', 'chatty'), { recursive: true });
    writeFileSync(join(dir, '.config', 'chatty', 'approvals.json'), '[]');
    writeFileSync(join(dir, 'notes.json'), '[{"forged":true}]');
    execFileSync('/bin/sh', ['-c', 'cp notes.json .config/chatty/approvals.js[o]n'], { cwd: dir });
    assert.equal(readFileSync(join(dir, '.config', 'chatty', 'approvals.json'), 'utf8'), '[{"forged":true}]');
    // bash's brace expansion needs no file to exist: it makes the grants file from nothing.
    execFileSync('/bin/bash', ['-c', 'cp {notes.json,.config/chatty/plugin-grants.json}'], { cwd: dir });
    assert.equal(readFileSync(join(dir, '.config', 'chatty', 'plugin-grants.json'), 'utf8'), '[{"forged":true}]');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('a command reaching the rules file through a bracket glob, braces, a glued option or a folder option is tagged gateway-config and no prefix rule approves it', { timeout: 180_000 }, async () => {
  const commands = [
    'cp notes.json .config/chatty/approvals.js[o]n',
    'cp notes.json .config/chatt[y]/plugin-grants.json',
    'ln .config/chatt[y]/approvals.json notes.json', // a second name for the rules file in the workspace
    'tar xf notes.tar -C .config/chatty',
    'cp {notes.json,.config/chatty/plugin-grants.json}', // bash: cp notes.json .config/chatty/plugin-grants.json
    'sort -o.config/chatty/approvals.json notes.json',
  ];
  // `serve` in $HOME; rules a person plausibly remembered ("always" for `cp x y`, `ln a b`, `tar xzf deps.tar.gz`).
  const { verdicts, asked } = await ask(home, ['cp', 'ln', 'tar', 'sort'].map((prefix) => ({ prefix })), 'exec', commands);
  assert.deepEqual(verdicts, commands.map(() => 'denied'), `asked: ${asked.map((r) => r.command_or_path).join(' | ')}`);
  for (const request of asked) {
    assert.ok(request.danger.includes('gateway-config'), `${request.command_or_path}: ${request.danger.join(', ')}`);
    assert.deepEqual(request.proposals, [], request.command_or_path);
  }
});

it('a write of a second name (hard link) of the rules file is tagged gateway-config, and no glob approves it', { timeout: 180_000 }, async () => {
  // The workspace is a project folder: the rules file lies outside it. The `**` rule writes the rules file: it exists before the link.
  const { verdicts, asked } = await ask(join(home, 'proj'), [{ glob: '**' }], 'write', ['notes.json'], () => linkSync(rulesFile(), join(home, 'proj', 'notes.json')));
  assert.deepEqual(verdicts, ['denied'], 'approved unasked by the ** rule: the write replaces the gateway rules file');
  assert.ok(asked[0]?.danger.includes('gateway-config'), JSON.stringify(asked[0]?.danger));
});

it('a remembered home-folder path does not approve a write a link sends elsewhere, and the request says where it lands', { timeout: 180_000 }, async () => {
  // Remembered when ~/notes/todo.md was a plain file (or did not exist yet); the link is made since.
  const made = (): void => symlinkSync(join(home, '.ssh', 'authorized_keys'), join(home, 'notes', 'todo.md'));
  const { verdicts, asked } = await ask(join(home, 'proj'), [{ exact: '~/notes/todo.md' }, { exact: '$HOME/notes/todo.md' }], 'write', ['~/notes/todo.md', '$HOME/notes/todo.md'], made);
  assert.deepEqual(verdicts, ['denied', 'denied'], 'approved unasked by the exact rule, though the write lands in ~/.ssh/authorized_keys');
  for (const request of asked) assert.equal(request.lands, join(home, '.ssh', 'authorized_keys'), request.command_or_path);
});

it('a write of a file with another name elsewhere (a hard link to ~/.ssh/authorized_keys) is tagged hard-link, and no glob or prefix rule approves it', { timeout: 180_000 }, async () => {
  // `ln ~/.ssh/authorized_keys keys.txt` made earlier (an approved command, an extracted archive): the workspace shows a plain file.
  const made = (): void => linkSync(join(home, '.ssh', 'authorized_keys'), join(home, 'proj', 'keys.txt'));
  const writes = await ask(join(home, 'proj'), [{ glob: '**' }], 'write', ['keys.txt'], made);
  assert.deepEqual(writes.verdicts, ['denied'], 'approved unasked by the ** rule: the write changes ~/.ssh/authorized_keys');
  assert.ok(writes.asked[0]?.danger.includes('hard-link'), JSON.stringify(writes.asked[0]?.danger));
  assert.deepEqual(writes.asked[0]?.proposals, []);
  rmSync(join(home, 'proj', 'keys.txt'));
  const commands = ['cp notes.txt keys.txt', 'tee keys.txt < notes.txt'];
  const execs = await ask(join(home, 'proj'), [{ prefix: 'cp' }, { prefix: 'tee' }], 'exec', commands, made);
  assert.deepEqual(execs.verdicts, ['denied', 'denied'], `asked: ${execs.asked.map((r) => r.command_or_path).join(' | ')}`);
  for (const request of execs.asked) assert.ok(request.danger.includes('hard-link'), `${request.command_or_path}: ${request.danger.join(', ')}`);
});
