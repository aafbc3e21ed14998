/**
 * What a remembered "for this task" grant covers: exactly what the person saw, in the workspace
 * they saw it in. A worker of the same role in the same root task, working in another folder
 * (a delegation may name any folder inside its caller's), ran the same words somewhere else
 * unasked: `rm -rf data` approved in `tree/sub` also ran in `tree`.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import type { ApprovalRequest } from '../../main/index.js';
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

it('a remembered glob or exact path approves no write that a link takes elsewhere: src/* does not approve src/gen.ts -> ../package.json, and nothing of the kind is offered', async () => {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-grant-landing-')));
  mkdirSync(join(ws, 'src'));
  writeFileSync(join(ws, 'package.json'), '{}');
  symlinkSync('../package.json', join(ws, 'src', 'gen.ts')); // a link committed to the branch: inside the workspace, no tag
  const t = startBroker(['coder'], { root: { workspaceRoot: ws } });
  try {
    const asked: ApprovalRequest[] = [];
    t.root.onApproval((request) => {
      asked.push(request);
      return 'denied';
    });
    t.broker.human.rules.add({ effect: 'allow', kind: 'write', agent: 'coder', match: { glob: 'src/*' } });
    t.broker.human.rules.add({ effect: 'allow', kind: 'write', agent: 'coder', match: { exact: 'src/gen.ts' } });
    const write = (path: string) => ({ approve: { kind: 'write', command_or_path: path } });
    const result = await t.root.invoke('coder', plan({ seq: [write('src/a.ts'), write('src/gen.ts')] }));
    assert.equal(result.success, true, result.error);
    assert.deepEqual(splitJson(result.response).flat(), ['approved', 'denied'], 'the glob approves src/a.ts; src/gen.ts, which lands in package.json, is put to the person');
    assert.deepEqual(asked.map((r) => [r.command_or_path, r.lands]), [['src/gen.ts', join(ws, 'package.json')]]);
    assert.deepEqual(asked[0]!.proposals, [], 'neither the exact path nor src/* names where it lands: nothing to remember');
  } finally {
    await t.close();
    rmSync(ws, { recursive: true, force: true });
  }
});
