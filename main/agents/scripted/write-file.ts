import { constants } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { diffStat } from './diff-stat.js';
import { resolveInWorkspace } from './workspace-path.js';

/** What a `write` would do: the file, its diff stat, the new content. */
export interface PlannedWrite {
  path: string;
  file: string;
  content: string;
  /** `+N -M`, for the approval. */
  diffStat: string;
}

/** The file's content for `text`: a text that does not end with a new line gets one (an empty text stays empty). */
export function fileContent(text: string): string {
  return text === '' || text.endsWith('\n') ? text : `${text}\n`;
}

/** Checks `path` and computes the diff stat, writing nothing (rejects with `WorkspaceRefusal`). */
export async function planWrite(workspace: string, path: string, text: string): Promise<PlannedWrite> {
  const file = await resolveInWorkspace(workspace, path);
  const content = fileContent(text);
  const before = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return undefined;
    throw err;
  });
  return { path, file, content, diffStat: diffStat(before, content) };
}

/**
 * Writes an approved plan: the path is checked again (parents made, each checked inside the
 * workspace) and the file opened `O_NOFOLLOW`, so a symlink put there meanwhile is not followed.
 */
export async function commitWrite(workspace: string, plan: PlannedWrite): Promise<string> {
  const file = await resolveInWorkspace(workspace, plan.path, { createParents: true });
  const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
  try {
    await handle.writeFile(plan.content, 'utf8');
  } finally {
    await handle.close();
  }
  return file;
}
