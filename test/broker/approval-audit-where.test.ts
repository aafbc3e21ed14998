/**
 * approvals.log said what was asked and who decided, not where: `rm -rf data` approved (by a
 * person, or by a task grant, which holds in one workspace) read the same whichever folder it ran
 * in, and a write through a linked folder logged only the path asked for. Each row now carries the
 * asker's workspace, and a write's `lands` when the links take it elsewhere. Real workers, a real
 * broker, the real file.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import type { AuditRow } from '../../main/broker/approvals/index.js';
import { plan, startBroker } from './helpers.js';

it('each row names the workspace the request was made in, and where a write through a link lands', async () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-audit-where-')));
  const tree = join(base, 'tree');
  mkdirSync(join(tree, 'sub'), { recursive: true });
  mkdirSync(join(base, 'elsewhere'));
  symlinkSync(join(base, 'elsewhere'), join(tree, 'docs'));
  const t = startBroker(['lead', 'coder'], { root: { workspaceRoot: tree } });
  const path = join(base, 'approvals.log');
  t.broker.human.audit.writeTo(path);
  try {
    t.root.onApproval(() => 'denied');
    const result = await t.root.invoke(
      'lead',
      plan({
        seq: [
          { approve: { kind: 'exec', command_or_path: 'rm -rf data' } },
          { approve: { kind: 'write', command_or_path: 'docs/notes.md' } },
          { delegate: { to: 'coder', prompt: { approve: { kind: 'exec', command_or_path: 'rm -rf data' } }, spawn_context: { workspace_root: join(tree, 'sub'), roster: [] } } },
        ],
      }),
    );
    assert.equal(result.success, true, result.error);
    const rows = readFileSync(path, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as AuditRow & { workspace?: string; lands?: string });
    assert.deepEqual(
      rows.map((row) => [row.agent, row.command_or_path, row.workspace, row.lands]),
      [
        ['lead-0', 'rm -rf data', tree, undefined],
        ['lead-0', 'docs/notes.md', tree, join(base, 'elsewhere', 'notes.md')],
        ['coder-0', 'rm -rf data', join(tree, 'sub'), undefined],
      ],
    );
  } finally {
    await t.close();
    rmSync(base, { recursive: true, force: true });
  }
});
