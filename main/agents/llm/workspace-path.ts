import { lstat, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { ToolRefusal } from './agent-tool.js';

/** A path the agent may write: inside its workspace once symlinks are resolved. */
export interface WorkspacePath {
  /** The path to write (real up to the last existing component). */
  path: string;
  /** The same, relative to the workspace's real path. */
  relative: string;
  /** Whether something is there now (a file to replace). */
  exists: boolean;
}

/**
 * Resolves `requested` (relative to the workspace, or absolute) to a path inside `workspace`, or
 * refuses it (`ToolRefusal`). `..` segments are refused outright rather than resolved; the nearest
 * existing ancestor (the path itself when it exists, following a symlink at the end) goes through
 * the kernel's `realpath`, and its real path must be the workspace's real path or under it, so a
 * symlink inside the workspace that points out of it is refused. Not a sandbox against the agent's
 * own commands: a command the human approved could swap a directory for a symlink before the write.
 */
export async function resolveInWorkspace(workspace: string, requested: string): Promise<WorkspacePath> {
  if (requested === '') throw new ToolRefusal('the path is empty');
  if (requested.includes('\0')) throw new ToolRefusal('the path contains a NUL byte');
  if (requested.split(/[\\/]/).includes('..')) throw new ToolRefusal(`${JSON.stringify(requested)} has a ".." segment: name the file inside the workspace directly`);
  const root = await realpath(workspace);
  const wanted = isAbsolute(requested) ? requested : join(root, requested);

  let existing = wanted;
  const missing: string[] = [];
  while (!(await exists(existing))) {
    const parent = dirname(existing);
    if (parent === existing) break;
    missing.unshift(existing.slice(parent.length).replace(/^[\\/]+/, ''));
    existing = parent;
  }
  const real = await realpath(existing);
  const path = missing.length === 0 ? real : join(real, ...missing);
  if (path !== root && !path.startsWith(root.endsWith(sep) ? root : root + sep)) {
    const really = path === wanted ? '' : ` (really ${JSON.stringify(path)})`;
    throw new ToolRefusal(`${JSON.stringify(requested)}${really} is outside the workspace ${JSON.stringify(root)}`);
  }
  if (path === root) throw new ToolRefusal(`${JSON.stringify(requested)} is the workspace itself, not a file in it`);
  return { path, relative: relative(root, path), exists: missing.length === 0 };
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    if (code === 'ENOTDIR') throw new ToolRefusal(`a parent of ${JSON.stringify(path)} is not a directory`);
    throw err;
  }
}
