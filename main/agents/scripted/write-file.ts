import { countDiffStat } from './old-content.js';
import type { OldFileSeen } from './old-file-seen.js';
import { replaceFileContent, resolveInWorkspace } from './workspace-path.js';

/** What a `write` would do: the file, its diff stat, the new content. */
export interface PlannedWrite {
  path: string;
  file: string;
  content: string;
  /** `+N -M`, for the approval. */
  diffStat: string;
  /** The file `diffStat` was counted against: the write replaces only that (undefined: not checked, where it cannot be told). */
  against?: OldFileSeen;
}

/** The file's content for `text`: a text that does not end with a new line gets one (an empty text stays empty). */
export function fileContent(text: string): string {
  return text === '' || text.endsWith('\n') ? text : `${text}\n`;
}

/** Checks `path` and computes the diff stat, writing nothing (rejects with `WorkspaceRefusal`). */
export async function planWrite(workspace: string, path: string, text: string): Promise<PlannedWrite> {
  const file = await resolveInWorkspace(workspace, path);
  const content = fileContent(text);
  const { diffStat, against } = await countDiffStat(workspace, file, path, content);
  return { path, file, content, diffStat, against };
}

/**
 * Writes an approved plan: the path is checked again (parents made, each checked inside the
 * workspace) and the file judged again by what is opened (`replaceFileContent`), so a symlink, a
 * fifo or a hard link put there meanwhile is never written through, and a file that is not the one
 * the approved diff stat was counted against (`against`) is not replaced.
 */
export async function commitWrite(workspace: string, plan: PlannedWrite): Promise<string> {
  const file = await resolveInWorkspace(workspace, plan.path, { createParents: true });
  await replaceFileContent(workspace, file, plan.path, plan.content, plan.against);
  return file;
}
