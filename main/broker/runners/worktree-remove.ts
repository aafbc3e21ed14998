import { rm } from 'node:fs/promises';

/**
 * Removes a worktree of ours and git's record of it. The folder goes first, by the broker itself
 * (`rm` looks at each entry with `lstat`: a link, at the top or inside, is removed, never
 * followed), then `git worktree remove --force --force <path>` (twice forced: it is locked) finds
 * it missing and removes only its record. Not git's own removal: its worker may have put a link
 * at `path`, which git follows, deleting what it leads to when that folder holds a `.git` file
 * naming the worktree; or broken its `.git` file, which git refuses to remove past (so the
 * worktree, its branch and our lock would stay for good, and every later prune would stop there).
 */
export async function removeWorktree(run: (args: string[]) => Promise<string>, path: string): Promise<void> {
  await rm(path, { recursive: true, force: true });
  await run(['worktree', 'remove', '--force', '--force', path]);
}
