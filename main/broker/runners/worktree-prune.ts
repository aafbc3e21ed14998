import { relative, sep } from 'node:path';
import { forgetWorktree, realWorktreesFolder, removeWorktree, WorktreeRemovalRefused } from './worktree-remove.js';
import { holderAlive, readLockReason, type WorktreeRecord } from './worktree-record.js';

/**
 * How many records of gateways that are gone one prune handles (default): each costs a few git
 * commands, a worker can forge any number of them (it writes the repository), and a start awaits
 * its prune. The rest are left for the next prune, which goes on from there.
 */
export const MAX_PRUNED_PER_CALL = 32;

/** What one prune did, for its log line. */
export interface PruneReport {
  /** Worktrees removed: ours, made by a process that is gone. */
  worktrees: number;
  /** Their branches deleted (no commits beyond the commit each was made from). */
  branches: number;
  /** Their branches kept because they hold commits (the work of a worker that was killed). */
  keptBranches: number;
  /** Ours whose process still runs: untouched. */
  live: number;
  /** Ours whose path runs through a link (the worktrees' folder replaced by one, say): left alone, each said to `log`. */
  refused: number;
  /** Ours whose process is gone, past the prune's limit (`MAX_PRUNED_PER_CALL`): left for the next prune. */
  left: number;
}

interface ListedWorktree {
  path: string;
  branch: string | undefined;
  lock: string | undefined;
}

/** `git worktree list --porcelain -z`: records of NUL-ended lines, each record ended by an empty one. */
function parseList(out: string): ListedWorktree[] {
  const listed: ListedWorktree[] = [];
  let current: ListedWorktree | undefined;
  for (const line of out.split('\0')) {
    if (line.startsWith('worktree ')) listed.push((current = { path: line.slice('worktree '.length), branch: undefined, lock: undefined }));
    else if (current && line.startsWith('branch refs/heads/')) current.branch = line.slice('branch refs/heads/'.length);
    else if (current && (line === 'locked' || line.startsWith('locked '))) current.lock = line.slice('locked '.length);
  }
  return listed;
}

/** Whether `path` is directly in `folder` (a worktree folder the factory names `<folder>/<leaf>`). */
function directlyIn(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel !== '' && !rel.startsWith('..') && !rel.includes(sep);
}

/**
 * Removes the worktrees this factory's naming owns (directly in `folder`, on a branch starting
 * with `branchPrefix`, locked with our record) whose process is gone, then git's own stale
 * entries (`git worktree prune`). Each one's branch goes too unless it has commits beyond the
 * commit it was made from, as `release()` would have done. Anything without our record is not
 * ours and is left alone. The caller holds the repository's lock.
 *
 * A record is git's text, which a worker can write (a "dead gateway's" record naming any folder),
 * so a path is removed only when its real path lies directly in the real worktrees' folder, which
 * must not be a link itself (`removeWorktree`): anything else is refused, said to `log`, and left.
 * At most `limit` records of processes that are gone are handled (removed or refused); the rest
 * are counted in `left` and handled by a later prune.
 */
export async function pruneLeftWorktrees(
  run: (args: string[]) => Promise<string>,
  folder: string,
  branchPrefix: string,
  log: (line: string) => void = () => {},
  limit = MAX_PRUNED_PER_CALL,
): Promise<PruneReport> {
  const report: PruneReport = { worktrees: 0, branches: 0, keptBranches: 0, live: 0, refused: 0, left: 0 };
  let realFolder: string | undefined; // undefined: there is no worktrees' folder, only records may be left
  let refusal: WorktreeRemovalRefused | undefined; // the worktrees' folder is a link: nothing in it is removed
  try {
    realFolder = await realWorktreesFolder(folder);
  } catch (err) {
    if (err instanceof WorktreeRemovalRefused) refusal = err;
    else if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  for (const listed of parseList(await run(['worktree', 'list', '--porcelain', '-z']))) {
    const record: WorktreeRecord | undefined = listed.lock === undefined ? undefined : readLockReason(listed.lock);
    if (!record || listed.branch === undefined || !listed.branch.startsWith(branchPrefix)) continue;
    if (!directlyIn(listed.path, folder) && !(realFolder !== undefined && directlyIn(listed.path, realFolder))) continue;
    if (holderAlive(record)) {
      report.live++;
      continue;
    }
    if (report.worktrees + report.refused >= limit) {
      report.left++;
      continue;
    }
    // It may hold what its killed worker never committed: gone, as on release (a link never followed).
    try {
      if (refusal !== undefined) throw refusal;
      if (realFolder === undefined) await forgetWorktree(run, listed.path);
      else await removeWorktree(run, listed.path, realFolder);
    } catch (err) {
      if (!(err instanceof WorktreeRemovalRefused)) throw err;
      report.refused++;
      log(`worktrees: refused to remove ${listed.path}: ${err.message}`);
      continue;
    }
    report.worktrees++;
    const ref = `refs/heads/${listed.branch}`;
    const ahead = await run(['rev-list', '--count', `${record.base}..${ref}`]).then(
      (out) => Number(out.trim()),
      () => undefined, // the branch is gone already, or its base commit is: nothing to judge by
    );
    if (ahead === 0) {
      await run(['branch', '-D', '--', listed.branch]);
      report.branches++;
    } else if (ahead !== undefined) report.keptBranches++;
  }
  await run(['worktree', 'prune']);
  return report;
}

/** The one log line a prune says. */
export function describePrune(report: PruneReport, repository: string): string {
  const kept = report.keptBranches === 0 ? '' : `, ${report.keptBranches} kept for their commits`;
  const refused = report.refused === 0 ? '' : `; ${report.refused} refused (a link on the way), left`;
  const left = report.left === 0 ? '' : `; ${report.left} more left for the next prune`;
  return (
    `worktrees: pruned ${report.worktrees} left in ${repository} by gateways that are gone (branches: ${report.branches} deleted${kept}); ` +
    `${report.live} held by live processes kept${refused}${left}`
  );
}
