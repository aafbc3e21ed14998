/**
 * `~name` is that user's home folder, as bash reads it (getpwnam), not a relative word: `cp x
 * ~me/.config/chatty/a*` (me the gateway's own user) replaced the rules file and was asked
 * untagged with an exact rule offered. A name the gateway cannot place (no passwd entry it can
 * read) is outside the workspace and could be anywhere: asked, tagged, nothing offered.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigPlaces, vouchedContext } from '../../main/broker/approvals/index.js';

function untagged(lines: readonly string[], workspace: string, config: ConfigPlaces): string[] {
  return lines.flatMap((line) => {
    const context = vouchedContext('exec', line, undefined, workspace, undefined, config);
    return context.danger.includes('gateway-config') && context.proposals.length === 0 ? [] : [`${line}  [${context.danger.join(', ')}] offers ${context.proposals.length}`];
  });
}

test('~user (the gateway user by name, or a name it cannot place) is a home folder, as ~ is', () => {
  // No file is written: ConfigPlaces only names the path under the real home.
  const { username, homedir } = userInfo();
  const config = new ConfigPlaces([join(homedir, '.config', 'chatty', 'approvals.json')]);
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-user-home-')));
  try {
    assert.deepEqual(untagged([
      `cp x ~${username}/.config/chatty/a*`,
      `cd ~${username}/.config/chatty && cp x a*`,
      `cd ~${username} && cp x .config/chatty/a*`,
      'cp x ~no-such-user-here/.config/chatty/a*',
      'cd ~no-such-user-here && cp x .config/chatty/a*',
    ], ws, config), []);
    // A write there is outside the workspace.
    const write = vouchedContext('exec', 'cp x ~no-such-user-here/notes.txt', undefined, ws, undefined, config);
    assert.ok(write.danger.includes('outside-workspace') && write.proposals.length === 0, write.danger.join(','));
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});
