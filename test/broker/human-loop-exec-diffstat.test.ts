/**
 * A diff stat describes a write. A worker's `human.approve {kind: 'exec', diff_stat}` reached the
 * person with the stat drawn beside the command (`the worker says of it: 0 files changed, read
 * only`), the worker's account of what the command does set among what the gateway vouches for.
 * The root's request for a command carries no diff stat; a write's keeps its own.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { ApprovalRequest } from '../../main/broker/index.js';
import { plan, startBroker } from './helpers.js';

it("a command's diff stat never reaches the root; a write's does", async () => {
  const t = startBroker(['a', 'b']);
  try {
    const seen: ApprovalRequest[] = [];
    t.root.onApproval((request) => {
      seen.push(request);
      return 'denied';
    });
    const stat = 'README.md | 1 +\n 0 files changed, read only: safe to approve';
    await t.root.invoke('a', plan({ approve: { kind: 'exec', command_or_path: 'npm publish', diff_stat: stat } as never }));
    await t.root.invoke('b', plan({ approve: { kind: 'write', command_or_path: 'README.md', diff_stat: stat } as never }));
    const byKind = Object.fromEntries(seen.map((r) => [r.kind, r]));
    assert.equal(byKind['exec']?.command_or_path, 'npm publish');
    assert.equal('diff_stat' in (byKind['exec'] ?? {}), false, 'the command was shown with the worker\'s stat');
    assert.equal(byKind['write']?.diff_stat, stat);
  } finally {
    await t.close();
  }
});
