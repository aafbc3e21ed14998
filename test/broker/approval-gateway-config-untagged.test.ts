/**
 * Lines that write the gateway's rules file reached the person with no gateway-config tag, and
 * with "always" offered (an exact rule, which then approves the same line unasked): the file
 * through $XDG_CONFIG_HOME (where defaultApprovalsFile puts it when set, and which workers
 * inherit) and through an option glued to its value (`sort -oFILE`). (`cd DIR && …` and
 * `python3 -c` strings are documented limits.)
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigPlaces, defaultApprovalsFile, vouchedContext } from '../../main/broker/approvals/index.js';

test('each line that writes the rules file is tagged gateway-config and offers nothing to remember', () => {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'review-untagged-')));
  const savedHome = process.env['HOME'];
  const savedXdg = process.env['XDG_CONFIG_HOME'];
  try {
    process.env['HOME'] = home;
    process.env['XDG_CONFIG_HOME'] = join(home, '.config');
    const rules = defaultApprovalsFile();
    assert.equal(rules, join(home, '.config', 'chatty', 'approvals.json'));
    mkdirSync(join(home, '.config', 'chatty'), { recursive: true });
    writeFileSync(rules, '[]');
    const config = new ConfigPlaces([rules]);
    const lines = [
      'cp notes.json "$XDG_CONFIG_HOME/chatty/approvals.json"',
      'sort -o.config/chatty/approvals.json notes.json',
    ];
    const missing = lines.flatMap((line) => {
      const context = vouchedContext('exec', line, undefined, home, undefined, config); // serve started in $HOME
      return context.danger.includes('gateway-config') && context.proposals.length === 0 ? [] : [`${line}  [${context.danger.join(', ')}] offers ${context.proposals.length}`];
    });
    assert.deepEqual(missing, []);
  } finally {
    if (savedHome === undefined) delete process.env['HOME'];
    else process.env['HOME'] = savedHome;
    if (savedXdg === undefined) delete process.env['XDG_CONFIG_HOME'];
    else process.env['XDG_CONFIG_HOME'] = savedXdg;
    rmSync(home, { recursive: true, force: true });
  }
});
