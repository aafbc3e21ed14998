import { lstat, rm } from 'node:fs/promises';

/**
 * Removes a worktree of ours and git's record of it: `git worktree remove --force --force <path>`
 * (twice forced: it is locked). Its worker may have put something else at `path`: git follows a
 * link there, and deletes what it leads to when that folder holds a `.git` file naming the
 * worktree (which the worker can write). So a link or a file at `path` is removed itself first,
 * never followed, and git then finds the worktree missing and removes only its record.
 */
export async function removeWorktree(run: (args: string[]) => Promise<string>, path: string): Promise<void> {
  const found = await lstat(path).catch(() => undefined);
  if (found !== undefined && !found.isDirectory()) await rm(path, { force: true });
  await run(['worktree', 'remove', '--force', '--force', path]);
}
