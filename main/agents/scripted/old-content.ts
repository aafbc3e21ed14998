import { diffStat } from './diff-stat.js';
import type { OldFileSeen } from './old-file-seen.js';
import { WorkspaceRefusal, readInWorkspace } from './workspace-path.js';

/**
 * The most of a file's old content read to compare it with what replaces it. The file is the
 * worker's to choose (a branch can commit 150 MB of line breaks in ~150 KB of git objects): read
 * whole and split a line to a string, it ended the worker in a V8 fatal error.
 */
export const MAX_OLD_CONTENT_BYTES = 4 * 1024 * 1024;

/** A diff stat for an approval, and the file it was counted against (undefined where that cannot be told: no `/proc/self/fd`). */
export interface CountedDiffStat {
  diffStat: string;
  against: OldFileSeen | undefined;
}

/** `countDiffStat`'s diff stat alone: the write that follows it does not check it still holds. */
export async function diffStatReplacing(workspace: string, file: string, path: string, content: string): Promise<string> {
  return (await countDiffStat(workspace, file, path, content)).diffStat;
}

/**
 * The diff stat of replacing `file` (a path `resolveInWorkspace` returned for `workspace`; `path` as
 * the person will read it) with `content`, for the approval: `+N -M` line by line, or `+N,
 * replacing a file of B bytes (too large to compare)`; and the file it was counted against, for the
 * write to replace only that (`replaceFileContent`'s `against`). The old file is read bounded and
 * without blocking (a fifo put there would hold the read for good), from the pinned workspace as the
 * write will reach it (`readInWorkspace`), not by its path: anything not a regular file is refused.
 */
export async function countDiffStat(workspace: string, file: string, path: string, content: string): Promise<CountedDiffStat> {
  const { read, seen } = await readInWorkspace(workspace, file, path, { maxBytes: MAX_OLD_CONTENT_BYTES });
  if (read.ok) return { diffStat: diffStat(read.bytes.toString('utf8'), content), against: seen };
  if (read.why === 'missing') return { diffStat: diffStat(undefined, content), against: seen };
  if (read.why === 'too-large') {
    // The size of the file that was opened (fstat): a look by path after it found another file, or
    // none (a racer removing it: a raw ENOENT, which ended the LLM agent's task).
    const added = diffStat(undefined, content).split(' ')[0]!;
    return { diffStat: `${added}, replacing a file of ${read.size.toLocaleString('en-US')} bytes (too large to compare)`, against: seen };
  }
  if (read.why === 'unreadable' && /ENOTDIR/.test(read.message)) return { diffStat: diffStat(undefined, content), against: seen };
  throw new WorkspaceRefusal(`refused: the file to replace can't be read: ${read.message}`);
}
