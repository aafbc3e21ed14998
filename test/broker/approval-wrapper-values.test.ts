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
import { dangerTags, vouchedContext } from '../../main/broker/approvals/index.js';
import { until } from './helpers.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

it('tmux new -s x rm -rf ~ runs rm: the command after the flags and their values is read', { timeout: 180_000 }, async () => {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'approval-wrapper-values-')));
  dirs.push(ws);
  const socket = join(ws, 'tmux.sock');
  const tmux = (...args: string[]): void => void spawnSync('tmux', ['-S', socket, '-f', '/dev/null', ...args], { cwd: ws, stdio: 'ignore', timeout: 30_000 });
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
