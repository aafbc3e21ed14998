import { existsSync } from 'node:fs';
import { lstat, mkdir, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { AdmittedNode } from '../../fabric/admission/index.js';
import type { SpawnContext } from '../../fabric/wire/payloads.js';
import { CLOSE_GRACE_MS } from '../../fabric/limits/constants.js';
import { git, GitError, GIT_TIMEOUT_MS, type GitOptions } from './git.js';
import { graceAfter } from './grace-after.js';
import { withRepoLock } from './repo-lock.js';
import type { Workspace, WorkspaceFactory } from './runner.js';
import { describePrune, pruneLeftWorktrees, type PruneReport } from './worktree-prune.js';
import { forgetRecordOf, realWorktreesFolder, removeWorktree } from './worktree-remove.js';
import { lockReason } from './worktree-record.js';

export interface GitWorktreeFactoryOptions {
  /**
   * The folder worktrees are made in. Default: `chatty-worktrees/` inside the repository's common
   * git directory (`.git/chatty-worktrees/`), which git never shows as content and which goes
   * with the repository. A relative path is taken from the spawn context's `workspace_root`.
   */
  root?: string;
  /** What each branch's name starts with (default `chatty/`): `chatty/<node>`. */
  branchPrefix?: string;
  /** The git executable (default `git`, from PATH). */
  git?: string;
  /**
   * How long one git command may run before it is ended with what it started (default 5 minutes,
   * `GIT_TIMEOUT_MS`): a hook or filter a worker configured in its repository never holds the
   * repository (every create and release in it waits its turn) or the broker's stop.
   */
  gitTimeoutMs?: number;
  /** Where the one line a prune says goes (default: nowhere). */
  log?: (line: string) => void;
  /**
   * How many records of gateways that are gone one prune handles (default 32,
   * `MAX_PRUNED_PER_CALL`); the rest are left for the next. A worker can forge any number of them.
   */
  pruneLimit?: number;
}

/** Repositories (with a folder and a branch prefix) this process has pruned: once each. */
const pruned = new Set<string>();

/**
 * How long the undoing of a start that was given up (what an ended `worktree add` made) may run
 * once the start's signal has aborted: its git, which a worker can make block, is then ended and
 * what is left keeps our lock record, for a later prune (as a release that failed leaves it).
 */
const CLEANUP_GRACE_MS = CLOSE_GRACE_MS;

/** How many taken names (a branch or folder left by an earlier run) are stepped over before giving up. */
const MAX_NAME_TRIES = 100;

/** A node's name as a branch component and folder name: `[A-Za-z0-9._-]`, no `..`, no leading `.`/`-`, no `.lock` end. */
export function worktreeName(node: string): string {
  let name = node.replace(/[^A-Za-z0-9._-]/g, '_').replace(/\.{2,}/g, (dots) => '_'.repeat(dots.length));
  if (name === '' || name.startsWith('.') || name.startsWith('-')) name = `_${name}`;
  if (name.endsWith('.') || name.endsWith('.lock')) name = `${name}_`;
  return name;
}

/**
 * Gives each worker a `git worktree` of its own, on a new branch made from the spawn context's
 * `base_branch` in its `workspace_root`. The workspace's context says the worktree (its canonical
 * real path) and the new branch, so a worker's own callees branch from its branch.
 * `release()` removes the worktree (`--force`: what was not committed is gone) and deletes the
 * branch unless it has commits beyond the commit it was made from.
 *
 * Each worktree is locked (`git worktree lock`) with a record of the process that made it; what a
 * killed process left is pruned by `prune()`, and by the first `create` in each repository.
 */
export class GitWorktreeFactory implements WorkspaceFactory {
  private readonly branchPrefix: string;
  private readonly gitOptions: GitOptions;

  constructor(private readonly options: GitWorktreeFactoryOptions = {}) {
    const { pruneLimit } = options;
    if (pruneLimit !== undefined && !(Number.isSafeInteger(pruneLimit) && pruneLimit > 0)) {
      throw new Error(`GitWorktreeFactory: pruneLimit must be a whole number above 0, not ${String(pruneLimit)}`);
    }
    this.branchPrefix = options.branchPrefix ?? 'chatty/';
    this.gitOptions = { command: options.git ?? 'git', timeoutMs: options.gitTimeoutMs ?? GIT_TIMEOUT_MS };
  }

  async create(node: AdmittedNode, spawnContext: SpawnContext, signal?: AbortSignal): Promise<Workspace> {
    const where = `a worktree for ${node.name}`;
    const { workspace_root: workspaceRoot, base_branch: base } = spawnContext;
    if (!workspaceRoot) throw new Error(`${where} needs the spawn context's workspace_root (the git repository to make it in); the context has none`);
    if (!base) throw new Error(`${where} needs the spawn context's base_branch (what its branch starts from); the context has none`);
    if (base.startsWith('-')) throw new Error(`${where}: base_branch "${base}" is not a branch name`);
    // Every git command of the start ends when the start is given up (the call cancelled, the
    // broker's stop): a worker can make any of them block (a fifo at .git/packed-refs, among
    // git's worktree records). What undoes a half-made worktree gets a grace after that.
    const options: GitOptions = signal ? { ...this.gitOptions, signal } : this.gitOptions;
    const run = (args: string[], cwd: string) => git(args, cwd, options);
    const { root, commonDir, prefix } = await this.locate(workspaceRoot, where, options);
    const folder = this.folderFor(root, commonDir);
    const cleanup = async <T>(undo: (options: GitOptions) => Promise<T>): Promise<T> => {
      const limit = graceAfter(signal, CLEANUP_GRACE_MS);
      try {
        return await undo(limit.signal ? { ...this.gitOptions, signal: limit.signal } : this.gitOptions);
      } finally {
        limit.dispose();
      }
    };

    return withRepoLock(commonDir, async () => {
      if (!pruned.has(this.pruneKey(commonDir, folder))) {
        await this.pruneLocked(root, commonDir, folder, options).catch((err: unknown) => this.options.log?.(`worktrees: could not prune in ${root}: ${(err as Error).message}`));
      }
      const baseCommit = await run(['rev-parse', '--verify', '--quiet', `${base}^{commit}`], root).then(
        (out) => out.trim(),
        () => {
          signal?.throwIfAborted();
          throw new Error(`${where}: base_branch "${base}" names no commit in ${root}`);
        },
      );
      await mkdir(folder, { recursive: true });
      await this.checkFolder(folder, root, where);
      // Not a link (a worker may have put one in its place): every worktree made here is removed by a path through it.
      const realFolder = await realWorktreesFolder(folder).catch((err: unknown) => {
        throw new Error(`${where}: ${(err as Error).message}`);
      });
      const name = worktreeName(node.name);
      for (let k = 0; k < MAX_NAME_TRIES; k++) {
        signal?.throwIfAborted();
        const leaf = k === 0 ? name : `${name}.${k}`;
        const branch = `${this.branchPrefix}${leaf}`;
        const dir = join(folder, leaf);
        if (existsSync(dir) || (await this.branchExists(branch, root, options))) continue; // left by an earlier run
        try {
          // The commit, not the name: the base cannot move between the check above and this.
          // Locked with our record: whoever finds it after this process is gone knows it may go.
          // The one command that runs the repository's hooks (post-checkout), as git would.
          const add = ['worktree', 'add', '--quiet', '--lock', '--reason', lockReason(baseCommit), '-b', branch, dir, baseCommit];
          // Its hooks and filters are the one thing here a worker can make last: a start given up ends it.
          await git(add, root, { ...options, hooks: true });
        } catch (err) {
          if (err instanceof GitError && err.ended) {
            // Ended mid-way (a hook or filter that hangs): what it made is ours, and goes.
            await cleanup((undo) => this.discard(dir, realFolder, branch, commonDir, undo));
            throw new Error(`${where} in ${root}: ${err.message}`);
          }
          // Another process took the name in between: step over it, as over an old one.
          if (existsSync(dir) || (await this.branchExists(branch, root, options))) continue;
          throw new Error(`${where} in ${root}: ${(err as Error).message}`);
        }
        const top = await realpath(dir);
        // The add ran the repository's hooks, which a worker can write: one may have put a link in
        // place of the worktrees' folder after the check above, and git made the worktree where it led.
        const stillOurs = await realWorktreesFolder(folder).then((real) => real === realFolder, () => false);
        if (dirname(top) !== realFolder || !stillOurs) {
          const forgotten = await cleanup((undo) => this.forgetMadeElsewhere([dir, top], branch, commonDir, undo));
          throw new Error(
            `${where}: git made it in ${top}, not directly in the worktrees' folder ${realFolder} (a link was put in place of ${folder} while the repository's hooks ran): refused; ${forgotten}`,
          );
        }
        const worktree = (inTree: string) =>
          new GitWorktree(inTree, { ...spawnContext, workspace_root: inTree, base_branch: branch }, top, realFolder, branch, baseCommit, commonDir, this.gitOptions);
        let inTree: string;
        try {
          // workspace_root was a folder inside its repository: the worker gets the same folder here.
          inTree = await folderInside(top, prefix, base);
        } catch (err) {
          await cleanup((undo) => worktree(top).removeUnlocked(undo.signal)); // we hold the repository's lock already
          throw new Error(`${where}: ${(err as Error).message}`);
        }
        return worktree(inTree);
      }
      throw new Error(`${where}: ${MAX_NAME_TRIES} names for it are taken in ${folder} or as branches ${this.branchPrefix}${name}…`);
    }, signal);
  }

  /**
   * Removes what processes that are gone left in `workspaceRoot`'s repository under this factory's
   * naming (its folder, its branch prefix, our lock record): their worktrees, and their branches
   * unless they hold commits. Another live process's worktrees, and anything not ours, stay. Says
   * how many in one line to `log` (when it found any of ours).
   */
  async prune(workspaceRoot: string): Promise<PruneReport> {
    const { root, commonDir } = await this.locate(workspaceRoot, 'pruning worktrees');
    return withRepoLock(commonDir, () => this.pruneLocked(root, commonDir, this.folderFor(root, commonDir)));
  }

  private async pruneLocked(root: string, commonDir: string, folder: string, options: GitOptions = this.gitOptions): Promise<PruneReport> {
    pruned.add(this.pruneKey(commonDir, folder)); // tried once: a prune that fails is not tried on every create
    const log = (line: string) => this.options.log?.(line);
    const run = (args: string[]) => git(args, commonDir, options);
    const report = await pruneLeftWorktrees(run, folder, this.branchPrefix, log, this.options.pruneLimit);
    if (report.worktrees + report.live + report.refused + report.left > 0) log(describePrune(report, root)); // found none of ours: nothing to say
    return report;
  }

  /**
   * A relative `root` is taken from `workspace_root`, which for a worker's callee is a folder of
   * the worker's own worktree: the worker could make the folder a link anywhere. Where it lies
   * inside `workspace_root`, no link on the way is followed: its real path must be the path itself.
   * (One that leads out of `workspace_root`, `../worktrees`, is the embedder's place, not a worker's.)
   */
  private async checkFolder(folder: string, root: string, where: string): Promise<void> {
    if (this.options.root === undefined || isAbsolute(this.options.root)) return;
    const rel = relative(root, folder);
    if (rel === '..' || rel.startsWith(`..${sep}`)) return;
    const real = await realpath(folder);
    if (real !== folder) {
      throw new Error(`${where}: the worktrees' folder ${JSON.stringify(this.options.root)} leads to ${JSON.stringify(real)} through a link inside workspace_root ${JSON.stringify(root)}`);
    }
  }

  private pruneKey(commonDir: string, folder: string): string {
    return JSON.stringify([commonDir, folder, this.branchPrefix]);
  }

  /** The repository `workspaceRoot` lies in: its top (canonical), common git directory, and `workspaceRoot`'s prefix in it. */
  private async locate(workspaceRoot: string, where: string, options: GitOptions = this.gitOptions): Promise<{ root: string; commonDir: string; prefix: string }> {
    const run = (args: string[], cwd: string) => git(args, cwd, options);
    let root: string;
    try {
      root = await realpath(workspaceRoot);
    } catch (err) {
      throw new Error(`${where}: workspace_root ${workspaceRoot} cannot be used: ${(err as Error).message}`);
    }
    const inside = await run(['rev-parse', '--is-inside-work-tree'], root).catch(() => 'false');
    if (inside.trim() !== 'true') throw new Error(`${where}: workspace_root ${root} is not inside a git work tree`);
    // Each asked alone, its one trailing line break cut: git prints a path raw, so a folder named
    // `a\nb` would read as `a` line by line (and --show-prefix prints an empty line at the top).
    const lineOf = async (flag: string): Promise<string> => (await run(['rev-parse', flag], root)).replace(/\n$/, '');
    const commonOut = await lineOf('--git-common-dir');
    const prefix = await lineOf('--show-prefix');
    const commonDir = await realpath(resolve(root, commonOut));
    return { root, commonDir, prefix };
  }

  /** The folder worktrees are made in: `options.root` (from `root`), else `<common git dir>/chatty-worktrees`. */
  private folderFor(root: string, commonDir: string): string {
    return this.options.root === undefined ? join(commonDir, 'chatty-worktrees') : resolve(root, this.options.root);
  }

  /** Removes what a `worktree add` that was ended mid-way made: its folder, git's entry for it, its branch. */
  private async discard(dir: string, realFolder: string, branch: string, commonDir: string, options: GitOptions): Promise<void> {
    const run = (args: string[]) => git(args, commonDir, options).catch(() => '');
    await removeWorktree(run, dir, realFolder); // also a folder git had not registered yet (ours: made in our folder)
    if (await this.branchExists(branch, commonDir, options)) await run(['branch', '-D', '--', branch]);
  }

  /**
   * Undoes a `worktree add` that made its folder outside ours (through a link): git's record of it
   * and our lock (`forgetRecordOf`), then its branch. The folder is left where git made it: nothing
   * outside the worktrees' folder is removed. Says what was done, for the refusal.
   */
  private async forgetMadeElsewhere(paths: readonly string[], branch: string, commonDir: string, options: GitOptions): Promise<string> {
    const forgotten = await forgetRecordOf(commonDir, paths).then(
      (n) => (n > 0 ? "git's record of it is removed" : 'git kept no record of it'),
      (err: unknown) => `git's record of it could not be removed: ${(err as Error).message}`,
    );
    const run = (args: string[]) => git(args, commonDir, options);
    const branchGone = !(await this.branchExists(branch, commonDir, options))
      ? 'it has no branch'
      : await run(['branch', '-D', '--', branch]).then(
          () => 'its branch too',
          (err: unknown) => `its branch ${branch} is left: ${(err as Error).message}`,
        );
    return `${forgotten}, ${branchGone}; its folder is left as it is (nothing outside the worktrees' folder is removed)`;
  }

  private async branchExists(branch: string, cwd: string, options: GitOptions): Promise<boolean> {
    return git(['show-ref', '--verify', '--quiet', `refs/heads/${branch}`], cwd, options).then(
      () => true,
      () => false,
    );
  }
}

/**
 * The folder `prefix` (git's `--show-prefix`: `a/b/`, or empty) inside the new worktree `top`, made
 * when the base commit lacks it. The worktree is checked out from the caller's *commit*, which may
 * hold a symlink where the caller's working tree (which the broker checked) has a real folder: a
 * link on the way is refused, never followed, and the result must lie inside `top` by real path.
 */
async function folderInside(top: string, prefix: string, base: string): Promise<string> {
  let here = top;
  const walked: string[] = [];
  for (const part of prefix.split('/').filter((p) => p !== '')) {
    walked.push(part);
    here = join(here, part);
    const found = await lstat(here).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    const shown = JSON.stringify(walked.join('/'));
    if (found === undefined) await mkdir(here);
    else if (found.isSymbolicLink()) throw new Error(`workspace_root's folder ${shown} is a symbolic link in the base commit of ${base}, so it is refused (a worktree never leads out of itself)`);
    else if (!found.isDirectory()) throw new Error(`workspace_root's folder ${shown} is not a folder in the base commit of ${base}`);
  }
  const real = await realpath(here);
  if (real !== top && !real.startsWith(top + sep)) throw new Error(`workspace_root's folder ${JSON.stringify(prefix)} leads to ${JSON.stringify(real)}, outside the worktree ${JSON.stringify(top)}`);
  return real;
}

/** One worktree and its branch. */
class GitWorktree implements Workspace {
  private released: Promise<void> | undefined;

  constructor(
    readonly dir: string,
    readonly spawnContext: SpawnContext,
    /** The worktree's top folder, by its real path when it was made. */
    readonly top: string,
    /** The real worktrees' folder it was made in: its removal is refused when `top` no longer lies directly in it (a link on the way). */
    private readonly realFolder: string,
    readonly branch: string,
    readonly baseCommit: string,
    private readonly commonDir: string,
    private readonly gitOptions: GitOptions,
  ) {}

  /** Idempotent; a release that failed is tried again by the next call. `signal` ends its git command (see `Workspace.release`). */
  release(signal?: AbortSignal): Promise<void> {
    if (!this.released) {
      const attempt = withRepoLock(this.commonDir, () => this.remove(signal), signal);
      this.released = attempt;
      attempt.catch(() => {
        if (this.released === attempt) this.released = undefined;
      });
    }
    return this.released;
  }

  /** `release()` for a caller that holds the repository's lock already. */
  removeUnlocked(signal?: AbortSignal): Promise<void> {
    return this.remove(signal);
  }

  private async remove(signal?: AbortSignal): Promise<void> {
    // Run in the common git directory: the repository this was made from may be a worktree that is gone already.
    const options: GitOptions = signal ? { ...this.gitOptions, signal } : this.gitOptions;
    const run = (args: string[]) => git(args, this.commonDir, options);
    // The folder by us (a link in its place or above it never followed), then git's record of it and our lock.
    await removeWorktree(run, this.top, this.realFolder);
    const ref = `refs/heads/${this.branch}`;
    const exists = await run(['show-ref', '--verify', '--quiet', ref]).then(
      () => true,
      () => false,
    );
    if (!exists) return; // the worker deleted it itself
    const ahead = Number((await run(['rev-list', '--count', `${this.baseCommit}..${ref}`])).trim());
    if (ahead === 0) await run(['branch', '-D', '--', this.branch]);
  }
}
