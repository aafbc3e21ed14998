/**
 * What is offered to remember must be no wider than what it says: "its directory". A write's
 * directory glob was its directory's name with `/*`, but `*` and `?` in that name are wildcards to
 * the glob: a write to `src*` + `/notes.txt` offered `src*` + `/*`, which also covers `src-secrets/`,
 * and one to `?/x` offered `?/*`, every one-letter directory. Now a directory holding `*` or `?` is
 * offered exactly only. Real workers, a real broker with a workspace.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ApprovalRequest } from '../../main/index.js';
import { plan, startBroker } from './helpers.js';

test('a write in a directory whose name holds * or ? is offered exactly only; a plain directory keeps its glob', async () => {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'approval-proposals-')));
  const t = startBroker(['coder'], { root: { workspaceRoot: ws } });
  try {
    const seen: ApprovalRequest[] = [];
    t.root.onApproval((request) => {
      seen.push(request);
      return 'denied';
    });
    const paths = ['src*/notes.txt', '?/x.txt', 'a/b?c/d.txt', 'src/notes.txt'];
    await t.root.invoke('coder', plan({ seq: paths.map((path) => ({ approve: { kind: 'write', command_or_path: path } })) }));
    assert.deepEqual(
      seen.map((r) => r.proposals),
      [[{ exact: 'src*/notes.txt' }], [{ exact: '?/x.txt' }], [{ exact: 'a/b?c/d.txt' }], [{ exact: 'src/notes.txt' }, { glob: 'src/*' }]],
    );
  } finally {
    await t.close();
    rmSync(ws, { recursive: true, force: true });
  }
});
