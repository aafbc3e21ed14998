import { spawn } from 'node:child_process';
import { lstat, readdir, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { readRecordFile } from './read-record-file.js';

/** A removal the broker refused: the path leads somewhere else than directly in the real worktrees' folder. Nothing was removed. */
export class WorktreeRemovalRefused extends Error {}

/**
 * The real path of the worktrees' folder `folder`, which must be a folder and not a link itself:
 * a worker runs as the user and could put a link to a folder of the person's in its place, and
 * every worktree path the broker removes runs through it. (Links above `folder` are the embedder's
 * or the person's: the default folder lies in the repository's common directory, taken by its
 * real path.) Rejects with `WorktreeRemovalRefused`, or the `lstat` error (ENOENT: there is none).
 */
export async function realWorktreesFolder(folder: string): Promise<string> {
  const found = await lstat(folder);
  if (found.isSymbolicLink()) {
    const target = await readlink(folder).catch(() => '?');
    throw new WorktreeRemovalRefused(`the worktrees' folder ${folder} is a symbolic link (to ${target}), never followed`);
  }
  if (!found.isDirectory()) throw new WorktreeRemovalRefused(`the worktrees' folder ${folder} is not a folder`);
  return realpath(folder);
}

/**
 * Removes the folder `<dir>/<leaf>` from inside `dir` by a shell whose working directory is `dir`
 * (entered with `cd -P`, then checked to be `dir` by its real path, `pwd -P`): once there, `rm`
 * takes `leaf` relative to that open folder, so a link put in place of `dir` or any folder above
 * it after the check is not followed. `rm -rf` itself walks the tree relative to open folders
 * (fts, openat) and never follows a link inside it, even one swapped in while it runs (Node's
 * `fs.rm` looks with lstat, then removes by path: it can be raced). No environment: nothing of the
 * gateway's reaches it.
 */
function removeInside(dir: string, leaf: string): Promise<void> {
  const script = 'cd -P -- "$1" || exit 3\n[ "$(pwd -P)" = "$1" ] || exit 4\nexec /bin/rm -rf -- "$2"';
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', script, 'sh', dir, leaf], { env: {}, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text.slice(0, 4096 - stderr.length)));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve();
      else if (code === 3 || code === 4) reject(new WorktreeRemovalRefused(`the worktrees' folder ${dir} was moved or replaced while ${leaf} in it was being removed: refused`));
      else reject(new Error(`removing ${leaf} in ${dir} failed (${code}): ${stderr.trim()}`));
    });
  });
}

/**
 * Removes git's record of the worktree at `path` and our lock on it: `git worktree unlock`, then
 * `git worktree prune`, which drops the record of a worktree whose folder is gone. Neither ever
 * removes a file outside the repository's git directory (`git worktree remove` would: it follows
 * a link at `path`, or above it, and empties the folder it leads to when that folder holds a
 * `.git` file naming the worktree, which the worker can write). An unlock that fails (no record:
 * a folder git had not registered yet, or the worker removed it itself) is not an error.
 */
export async function forgetWorktree(run: (args: string[]) => Promise<string>, path: string): Promise<void> {
  await run(['worktree', 'unlock', path]).catch(() => '');
  await run(['worktree', 'prune']);
}

/**
 * Removes a worktree of ours and git's record of it. `path` must lie directly in the real
 * worktrees' folder `realFolder` (see `realWorktreesFolder`) by its real path: a link on the way
 * (a worker replaced the worktrees' folder, or a folder above it) refuses the removal with
 * `WorktreeRemovalRefused`, and nothing is removed. The folder goes first, by the broker
 * (`removeInside`: a link at `path` is removed, never followed, nor one inside it), then git's
 * record (`forgetWorktree`). Not git's own removal: it follows links, and it refuses to remove a
 * worktree whose `.git` file the worker broke (so the worktree, its branch and our lock would stay
 * for good, and every later prune would stop there).
 */
export async function removeWorktree(run: (args: string[]) => Promise<string>, path: string, realFolder: string): Promise<void> {
  const leaf = basename(path);
  if (leaf === '' || leaf === '.' || leaf === '..') throw new WorktreeRemovalRefused(`${path} names no worktree folder: refused`);
  const parent = await realpath(dirname(path)).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined; // its folder is gone: only git's record is left
    throw err;
  });
  if (parent !== undefined) {
    if (parent !== realFolder) {
      throw new WorktreeRemovalRefused(`${path} lies in ${parent} by its real path, not in the worktrees' folder ${realFolder}: a link on its way, never followed`);
    }
    await removeInside(realFolder, leaf);
  }
  await forgetWorktree(run, path);
}

/**
 * Removes git's record of a worktree whose folder is not ours to remove: git made it through a
 * link, outside the worktrees' folder (a hook swapped the folder while `worktree add` ran). The
 * record is the folder in `<commonDir>/worktrees` whose `gitdir` names `<path>/.git` for one of
 * `paths` (git writes the real path; older gits the path given), with our lock in it; it goes by
 * `removeInside` (no link followed), so `git worktree prune` is not needed and the worktree's
 * own folder, wherever it is, is left as it is. `<commonDir>/worktrees` must not be a link.
 * Resolves to how many records went.
 */
export async function forgetRecordOf(commonDir: string, paths: readonly string[]): Promise<number> {
  const records = join(commonDir, 'worktrees');
  if ((await lstat(records)).isSymbolicLink()) throw new WorktreeRemovalRefused(`git's worktree records' folder ${records} is a symbolic link, never followed`);
  const real = await realpath(records);
  const wanted = new Set(paths.map((path) => `${join(path, '.git')}\n`));
  let forgotten = 0;
  for (const id of await readdir(real)) {
    const gitdir = await readRecordFile(join(real, id, 'gitdir')); // a worker can make it a fifo, or gigabytes
    if (!wanted.has(gitdir.endsWith('\n') ? gitdir : `${gitdir}\n`)) continue;
    await removeInside(real, id);
    forgotten++;
  }
  return forgotten;
}
