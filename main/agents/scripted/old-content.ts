import { diffStat } from './diff-stat.js';
import { WorkspaceRefusal, readInWorkspace } from './workspace-path.js';

/**
 * The most of a file's old content read to compare it with what replaces it. The file is the
 * worker's to choose (a branch can commit 150 MB of line breaks in ~150 KB of git objects): read
 * whole and split a line to a string, it ended the worker in a V8 fatal error.
 */
export const MAX_OLD_CONTENT_BYTES = 4 * 1024 * 1024;

/**
 * The diff stat of replacing `file` (a path `resolveInWorkspace` returned for `workspace`; `path` as
 * the person will read it) with `content`, for the approval: `+N -M` line by line, or `+N,
 * replacing a file of B bytes (too large to compare)`. The old file is read bounded and without
 * blocking (a fifo put there would hold the read for good), from the pinned workspace as the write
 * will reach it (`readInWorkspace`), not by its path: anything not a regular file is refused.
 */
export async function diffStatReplacing(workspace: string, file: string, path: string, content: string): Promise<string> {
  const read = await readInWorkspace(workspace, file, path, { maxBytes: MAX_OLD_CONTENT_BYTES });
  if (read.ok) return diffStat(read.bytes.toString('utf8'), content);
  if (read.why === 'missing') return diffStat(undefined, content);
  if (read.why === 'too-large') {
    // The size of the file that was opened (fstat): a look by path after it found another file, or
    // none (a racer removing it: a raw ENOENT, which ended the LLM agent's task).
    const added = diffStat(undefined, content).split(' ')[0]!;
    return `${added}, replacing a file of ${read.size.toLocaleString('en-US')} bytes (too large to compare)`;
  }
  if (read.why === 'unreadable' && /ENOTDIR/.test(read.message)) return diffStat(undefined, content);
  throw new WorkspaceRefusal(`refused: the file to replace can't be read: ${read.message}`);
}
