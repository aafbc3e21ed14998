/**
 * `SharedDirectory` (the bundled agents' workspaces without git) never hands out a directory
 * outside its workspace, whatever the spawn context names by the time the worker starts.
 */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { SharedDirectory } from '../../main/agents/bundled.js';
import { Directory } from '../../main/fabric/index.js';
import { tempDir } from '../agents/helpers.js';

const home = tempDir('chatty-shared-dir-');
after(() => rmSync(home, { recursive: true, force: true }));

it('gives the workspace or a folder inside it, by real path, and refuses one that leads outside', async () => {
  const workspace = join(home, 'workspace');
  const outside = join(home, 'outside');
  mkdirSync(join(workspace, 'sub'), { recursive: true });
  mkdirSync(outside);
  symlinkSync(outside, join(workspace, 'link-out'));
  symlinkSync(join(workspace, 'sub'), join(home, 'link-in'));
  const factory = new SharedDirectory(workspace);
  const node = () => new Directory().admit('helper');
  assert.equal((await factory.create(node(), { roster: [] })).dir, workspace);
  assert.equal((await factory.create(node(), { workspace_root: join(home, 'link-in'), roster: [] })).dir, join(workspace, 'sub'));
  await assert.rejects(factory.create(node(), { workspace_root: join(workspace, 'link-out'), roster: [] }), {
    message: `workspace_root ${JSON.stringify(join(workspace, 'link-out'))} leads to ${JSON.stringify(outside)}, outside the workspace ${JSON.stringify(workspace)}`,
  });
  await assert.rejects(factory.create(node(), { workspace_root: `${workspace}-evil`, roster: [] }), /ENOENT/);
  mkdirSync(`${workspace}-evil`);
  await assert.rejects(factory.create(node(), { workspace_root: `${workspace}-evil`, roster: [] }), /outside the workspace/);
});
