import { hostname } from 'node:os';
import { z } from 'zod';

/**
 * Who holds a worktree the factory made: written as the reason of git's own worktree lock
 * (`git worktree add --lock --reason …`), so it lives with the worktree in the repository, and
 * `git worktree prune` (ours or the user's) never removes a worktree its process still uses.
 */
const RECORD_PREFIX = 'chatty-gateway ';

const WorktreeRecord = z
  .object({
    /** The process that made it (the gateway's). */
    pid: z.number().int().positive(),
    /** Where that process runs: a pid means nothing on another machine sharing the repository. */
    host: z.string().min(1),
    /** The commit its branch was made from: a branch with commits beyond it is work, kept. */
    base: z.string().regex(/^[0-9a-f]{40,64}$/),
  })
  .strict();
export type WorktreeRecord = z.infer<typeof WorktreeRecord>;

/** This process's record for a worktree made from `base`, as a lock reason (one line). */
export function lockReason(base: string): string {
  return RECORD_PREFIX + JSON.stringify({ pid: process.pid, host: hostname(), base } satisfies WorktreeRecord);
}

/** The record in a lock reason, or undefined when the lock is not ours (another tool's, a person's). */
export function readLockReason(reason: string): WorktreeRecord | undefined {
  if (!reason.startsWith(RECORD_PREFIX)) return undefined;
  try {
    const parsed = WorktreeRecord.safeParse(JSON.parse(reason.slice(RECORD_PREFIX.length)));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the process that wrote `record` may still run. Only a pid on this host that no longer
 * exists is gone; another host's, or a pid that exists (even reused by an unrelated process, or
 * another user's: EPERM), counts as alive, so a mistake keeps a worktree, never removes a live one.
 */
export function holderAlive(record: WorktreeRecord): boolean {
  if (record.host !== hostname()) return true;
  if (record.pid === process.pid) return true;
  try {
    process.kill(record.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
