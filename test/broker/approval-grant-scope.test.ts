/**
 * What a remembered "for this task" grant covers: exactly what the person saw, in the workspace
 * they saw it in. A worker of the same role in the same root task, working in another folder
 * (a delegation may name any folder inside its caller's), ran the same words somewhere else
 * unasked: `rm -rf data` approved in `tree/sub` also ran in `tree`.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { plan, splitJson, startBroker } from './helpers.js';

const approve = (command: string) => ({ approve: { kind: 'exec', command_or_path: command } });

it('a task grant covers its command in the workspace the person saw only: the same role in another folder of the same task is asked', async () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-grant-scope-')));
  const tree = join(base, 'tree');
  mkdirSync(join(tree, 'sub'), { recursive: true });
  const t = startBroker(['lead', 'coder'], { root: { workspaceRoot: tree } });
  try {
    const asked: string[] = [];
    t.root.onApproval((request) => {
      asked.push(`${request.asker.agent} in ${request.workspace}: ${request.command_or_path}`);
      return asked.length === 1 ? { verdict: 'approved', remember: 'task' } : 'denied';
    });
    const result = await t.root.invoke(
      'lead',
      plan({
        seq: [
          { delegate: { to: 'coder', prompt: { seq: [approve('rm -rf data'), approve('rm -rf data')] }, spawn_context: { workspace_root: join(tree, 'sub'), roster: [] } } },
          { delegate: { to: 'coder', prompt: approve('rm -rf data') } },
        ],
      }),
    );
    assert.equal(result.success, true, result.error);
    const [inSub, inTree] = splitJson(result.response) as { response: string }[];
    assert.deepEqual(splitJson(inSub!.response).flat(), ['approved', 'approved'], 'the grant covers the same command where it was seen');
    assert.deepEqual(splitJson(inTree!.response).flat(), ['denied'], 'in another folder the person is asked');
    assert.deepEqual(asked, [`coder-0 in ${join(tree, 'sub')}: rm -rf data`, `coder-1 in ${tree}: rm -rf data`]);
  } finally {
    await t.close();
    rmSync(base, { recursive: true, force: true });
  }
});
