/**
 * `serve` started in the home folder: the agents' workspace then holds `~/.config/chatty/`, the
 * gateway's own rules and grants. A worker's write of either was put to the person as a plain
 * write (y, t and a offered): one Approve, and it had an "always allow" rule or a grant of its own.
 * On a real pseudo-terminal the prompt now says `!! DANGER: gateway-config` and offers nothing to
 * remember.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { APPROVALS_WORKER, exited, ptyScreen, spawnCliOnPty } from '../helpers/cli.js';


const home = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-serve-home-')));
after(() => rmSync(home, { recursive: true, force: true }));

test('serve in the home folder: a write of its own rules file or grants file is tagged gateway-config, and t and a are not offered', { timeout: 180_000 }, async () => {
  mkdirSync(join(home, 'modules'));
  const rules = join(home, '.config', 'chatty', 'approvals.json'); // where serve keeps them by default under this HOME
  const child = spawnCliOnPty(['serve', '--runtime-dir', join(home, 'run'), '--modules-dir', join(home, 'modules'), '--no-bundled-agents', '--approvals-file', rules, '--agent', `asker=${APPROVALS_WORKER}`], home);
  const ended = exited(child as never);
  const { screen, until } = ptyScreen(child, ended);
  await until('\n> ');
  child.stdin.write('asker config\r');
  let at = await until('asks to write: .config/chatty/approvals.json\n');
  at = await until('  approve? [y/N] ', at);
  const first = screen().slice(screen().lastIndexOf('asks to write: .config/chatty/approvals.json'));
  assert.ok(first.includes('  !! DANGER: gateway-config\n'), first);
  // The bare tag does not say what is at stake: its words, under it (a terminal wraps the long line).
  assert.ok(first.replace(/\s+/g, ' ').includes("!! gateway-config: it reaches the gateway's own configuration (its rules, grants, plugin locks or audit log)"), first);
  assert.ok(!first.includes('t: approve for this task') && !first.includes('a: always'), first);
  child.stdin.write('n\r');
  at = await until('asks to write: .config/chatty/plugin-grants.json\n', at);
  at = await until('  approve? [y/N] ', at);
  assert.ok(screen().slice(screen().lastIndexOf('asks to write: .config/chatty/plugin-grants.json')).includes('  !! DANGER: gateway-config\n'), screen());
  child.stdin.write('n\r');
  await until('verdicts denied denied', at);
  child.stdin.write('\x03');
  assert.equal((await ended).code, 0, screen());
  child.stdin.end();
});
