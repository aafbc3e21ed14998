/**
 * Look-alike letters in what a worker asks to run: `gіthub.com` with a Cyrillic і (U+0456) reads
 * as github.com. The display rule showed letters as they are, so the person read github.com and
 * an allow rule `git remote *` approved it unasked. Now a Cyrillic, Greek or Armenian letter in a
 * word of Latin letters counts as hidden: shown as its code point, tagged, never remembered and
 * never approved by a rule. Real workers, a real broker.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ApprovalRequest } from '../../main/index.js';
import { plan, splitJson, startBroker } from './helpers.js';

/**
 * Runs `commands` as a worker's approvals under an allow rule `git remote *`, the root answering
 * `denied` to whatever reaches it: what each was answered, and the requests the root saw.
 */
async function underAllowRule(commands: string[]): Promise<{ verdicts: unknown; seen: ApprovalRequest[] }> {
  const t = startBroker(['coder']);
  try {
    const seen: ApprovalRequest[] = [];
    t.root.onApproval((request) => {
      seen.push(request);
      return 'denied';
    });
    t.broker.human.rules.add({ effect: 'allow', kind: 'exec', agent: 'coder', match: { prefix: 'git remote' } });
    const result = await t.root.invoke('coder', plan({ seq: commands.map((command_or_path) => ({ approve: { kind: 'exec', command_or_path } })) }));
    return { verdicts: splitJson(result.response), seen };
  } finally {
    await t.close();
  }
}

test('a look-alike letter in a command is hidden: the person is asked (no rule approves it), it is tagged and nothing is offered to remember', async () => {
  const spoofed = 'git remote add origin https://g\u0456thub.com/me/repo';
  const { verdicts, seen } = await underAllowRule(['git remote add origin https://github.com/me/repo', spoofed]);
  assert.deepEqual(verdicts, [['approved'], ['denied']], 'the rule approves the real one; the look-alike is asked');
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.command_or_path, spoofed);
  assert.equal(seen[0]!.hidden, true);
  assert.ok(seen[0]!.danger.includes('hidden-characters'), JSON.stringify(seen[0]!.danger));
  assert.deepEqual(seen[0]!.proposals, []);
});

test('look-alikes past the three scripts (a whole Cyrillic word, ɡ, 𝗀, Lisu, an invisible Khmer vowel, a Mongolian selector, U+FFFC, an overlay) are asked, never approved by a rule', async () => {
  const spoofs = [
    'git remote add origin https://\u0440\u0430\u0443\u0440\u0430\u04CF.com/me/repo',
    'git remote add origin https://\u0261ithub.com/me/repo',
    'git remote add origin https://\u{1D5C0}ithub.com/me/repo',
    'git remote add origin https://\uA4D6ithub.com/me/repo',
    'git remote add origin https://github.com/me/repo\u17B4',
    'git remote add origin https://github.com/me/repo\u180B',
    'git remote add origin https://github.com/me/repo\uFFFC',
    'git remote add origin https://github.com/me/repo;\u0338',
  ];
  const { verdicts, seen } = await underAllowRule(spoofs);
  assert.deepEqual(verdicts, spoofs.map(() => ['denied']));
  assert.deepEqual(seen.map((request) => [request.command_or_path, request.hidden, request.danger.includes('hidden-characters')]), spoofs.map((s) => [s, true, true]));
});
