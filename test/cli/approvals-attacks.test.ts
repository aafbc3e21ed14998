/**
 * An adversarial review of `chatty-gateway approvals list` (issue 18): a rules file edited by hand
 * cannot make the list read as something other than what the file holds.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { runCli } from '../helpers/cli.js';

it('approvals list shows a hand-edited rule with hidden characters and new lines as code points, one line per rule', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chatty-approvals-attacks-'));
  try {
    const file = join(dir, 'approvals.json');
    const rules = [
      { id: 'rule-1\nrule-2', effect: 'allow', kind: 'exec', agent: 'co\u202eder', match: { exact: 'make\u200b deploy' } },
      { id: 'rule-3', effect: 'allow', kind: 'exec', agent: '*', match: { prefix: 'npm\ttest' } },
    ];
    writeFileSync(file, JSON.stringify({ version: 1, rules }), { mode: 0o600 });
    const listed = await runCli(['approvals', 'list', '--approvals-file', file]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(
      listed.stdout,
      'rule-1<U+000A>rule-2  allow exec  co<U+202E>der    make<U+200B> deploy\n' + 'rule-3  allow exec  *                npm<U+0009>test *\n',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
