/**
 * A `cp` prefix rule approves, unasked and untagged, a command that writes through a hard
 * link to ~/.ssh/authorized_keys: into a folder (`cp x d/`), by a glob (`cp x k*`), or from a
 * folder the line changed to (`cd d && cp x notes.txt`). Real gateway, real worker; and the
 * shell really writes authorized_keys for each.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import type { NewApprovalRule } from '../../main/index.js';
import { askGateway } from './approval-ask.js';

let home = '';
const savedHome = process.env['HOME'];
before(() => {
  home = realpathSync(mkdtempSync(join(tmpdir(), 'rv2-hardlink-')));
  mkdirSync(join(home, '.config', 'chatty'), { recursive: true });
  for (const folder of ['proj', 'proj/d', 'proj/new', '.ssh']) mkdirSync(join(home, folder));
  process.env['HOME'] = home;
});
after(() => {
  if (savedHome === undefined) delete process.env['HOME'];
  else process.env['HOME'] = savedHome;
  rmSync(home, { recursive: true, force: true });
});
const keys = (): string => join(home, '.ssh', 'authorized_keys');
const made = (): void => {
  writeFileSync(keys(), 'ssh-ed25519 AAAA me\n');
  linkSync(keys(), join(home, 'proj', 'keys.txt'));
  linkSync(keys(), join(home, 'proj', 'd', 'keys.txt'));
  linkSync(keys(), join(home, 'proj', 'd', 'only.txt'));
  writeFileSync(join(home, 'proj', 'keys.new'), 'ssh-ed25519 EVIL attacker\n');
  writeFileSync(join(home, 'proj', 'new', 'keys.txt'), 'ssh-ed25519 EVIL attacker\n');
};
const clean = (): void => {
  for (const f of ['proj/keys.txt', 'proj/d/keys.txt', 'proj/d/only.txt', 'proj/keys.new', 'proj/new/keys.txt', '.ssh/authorized_keys']) rmSync(join(home, f), { force: true });
};

const ask = (workspace: string, rules: NewApprovalRule['match'][], kind: 'exec' | 'write', requests: string[], setUp?: () => void): ReturnType<typeof askGateway> => askGateway(home, workspace, rules, kind, requests, setUp);

const commands = ['cp new/keys.txt d/', 'cp new/keys.txt d', 'cp keys.new k*.txt', 'cd d && cp ../keys.new only.txt', 'cd .. && cp proj/keys.new proj/keys.txt'];

it('the shell writes authorized_keys for each line', () => {
  for (const line of commands) {
    clean();
    made();
    execFileSync('/bin/bash', ['-c', line], { cwd: join(home, 'proj') });
    assert.match(readFileSync(keys(), 'utf8'), /EVIL/, line);
  }
  clean();
});

it('a cp prefix rule does not approve a write through a hard link into a folder, by a glob, or from a folder changed to', { timeout: 180_000 }, async () => {
  clean();
  const { verdicts, asked } = await ask(join(home, 'proj'), [{ prefix: 'cp' }], 'exec', commands, made);
  const problems = commands.flatMap((line, i) => {
    if (verdicts[i] !== 'denied') return [`${line}: approved unasked by the cp rule`];
    const request = asked.find((r) => r.command_or_path === line);
    return request !== undefined && request.danger.includes('hard-link') && request.proposals.length === 0 ? [] : [`${line}: asked as [${request?.danger.join(',')}], offers ${request?.proposals.length}`];
  });
  assert.deepEqual(problems, []);
});

it('the names read to expand a request\'s glob targets are bounded for the whole request, not per glob', async () => {
  const { ConfigPlaces, vouchedContext } = await import('../../main/broker/approvals/index.js');
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-glob-budget-')));
  try {
    mkdirSync(join(ws, 'd'));
    for (let i = 0; i < 3_000; i++) writeFileSync(join(ws, 'd', `f${i}`), '');
    const config = new ConfigPlaces([join(home, '.config', 'chatty', 'approvals.json')]);
    // One glob reads 3,000 names (under the bound); two read 6,000: where they land is then not read.
    assert.ok(!vouchedContext('exec', 'cp x d/*q', undefined, ws, undefined, config).danger.includes('unread-landing'));
    const both = vouchedContext('exec', 'cp x d/*q d/*z', undefined, ws, undefined, config);
    assert.ok(both.danger.includes('unread-landing') && both.proposals.length === 0, both.danger.join(','));
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});
