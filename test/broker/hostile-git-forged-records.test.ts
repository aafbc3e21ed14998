/**
 * A hostile worker forges many records of "killed gateways" (locked worktree records naming a
 * pid that does not exist) in its repository: the next start's prune, which the start awaits,
 * must not take longer with each one. A prune handles a bounded number of them and leaves the
 * rest for the next. Real git, a real repository; the records written as the worker's approved
 * command would (it runs as the user).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { GitWorktreeFactory } from '../../main/broker/runners/index.js';
import { tempDir } from '../agents/helpers.js';
import { forgeDeadRecord, repoIn } from './hostile-git-broker.js';

const temporary: string[] = [];
after(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

test("forged dead gateways' records: a prune handles at most pruneLimit of them, says how many are left, and the next prune goes on", async () => {
  const home = tempDir('chatty-hostile-records-');
  temporary.push(home);
  const { repo, common } = repoIn(home);
  mkdirSync(join(common, 'chatty-worktrees'));
  for (let i = 0; i < 7; i++) forgeDeadRecord(common, `forged-${i}`, join(common, 'chatty-worktrees', `forged-${i}`));
  const lines: string[] = [];
  const factory = new GitWorktreeFactory({ pruneLimit: 3, log: (line) => lines.push(line) });
  assert.deepEqual(await factory.prune(repo), { worktrees: 3, branches: 0, keptBranches: 0, live: 0, refused: 0, left: 4 });
  assert.match(lines.join('\n'), /worktrees: pruned 3 left in .* 4 more left for the next prune/);
  assert.deepEqual(await factory.prune(repo), { worktrees: 3, branches: 0, keptBranches: 0, live: 0, refused: 0, left: 1 });
  assert.deepEqual(await factory.prune(repo), { worktrees: 1, branches: 0, keptBranches: 0, live: 0, refused: 0, left: 0 });
  const listed = execFileSync('git', ['worktree', 'list', '--porcelain'], { cwd: repo, encoding: 'utf8' });
  assert.equal(listed.split('\n').filter((l) => l.startsWith('worktree ')).length, 1, 'every forged record is gone');
});

test('a pruneLimit that is not a whole number above 0 is refused at once', () => {
  for (const pruneLimit of [0, -1, 1.5, Number.NaN]) {
    assert.throws(() => new GitWorktreeFactory({ pruneLimit }), /pruneLimit must be a whole number above 0/);
  }
});
