/**
 * Stands in for a gateway that holds worktrees, for test/broker/worktree-prune.test.ts: makes
 * `argv[3]` worktrees of the repository `argv[2]` with a `GitWorktreeFactory` (the first with a
 * commit on its branch when `argv[4]` is `commit`), prints their folders as one JSON line, and
 * stays until it is killed.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GitWorktreeFactory, workerEnv } from '../../../main/broker/runners/index.js';
import { Directory } from '../../../main/fabric/index.js';

const [repo, count = '1', commit] = process.argv.slice(2);
if (repo === undefined) throw new Error('usage: worktree-holder.ts <repo> [count] [commit]');
const factory = new GitWorktreeFactory();
const directory = new Directory();
const dirs: string[] = [];
for (let i = 0; i < Number(count); i++) {
  const workspace = await factory.create(directory.admit(`held-by-${process.pid}`), { workspace_root: repo, base_branch: 'main', roster: [] });
  dirs.push(workspace.dir);
}
if (commit === 'commit' && dirs[0] !== undefined) {
  writeFileSync(join(dirs[0], 'work.txt'), 'work a killed worker committed\n');
  const g = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: dirs[0], env: workerEnv(process.env) });
  g('add', 'work.txt');
  g('commit', '-q', '-m', 'work');
}
process.stdout.write(`${JSON.stringify(dirs)}\n`);
setInterval(() => {}, 60_000);
