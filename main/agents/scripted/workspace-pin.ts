import { constants, existsSync } from 'node:fs';
import { open, readlink, realpath, type FileHandle } from 'node:fs/promises';

/** Linux's per-descriptor links: `<PROC_FD>/<dirfd>/<name>` is `openat(dirfd, name)`; absent on macOS. */
export const PROC_FD = '/proc/self/fd';
let procFd: boolean | undefined;
export function hasProcFd(): boolean {
  procFd ??= existsSync(PROC_FD);
  return procFd;
}

/** A workspace held open: its real path when pinned, and the descriptor of that folder. */
export interface PinnedWorkspace {
  readonly real: string;
  readonly fd: number;
  /** The folder's identity: what is opened through `fd` must still be it. */
  readonly dev: number;
  readonly ino: number;
}

interface Pin extends PinnedWorkspace {
  handle: FileHandle;
  holders: number;
}

/** Pinned workspaces, by the path the agent was given (the one it passes to every write). */
const pins = new Map<string, Pin>();

/**
 * Holds `workspace` open until the returned release is called (a task's life): every approved write
 * in it (`resolveInWorkspace`, `replaceFileContent`) then starts from this folder, not from its
 * path. By path, a process sharing the workspace that exchanged the workspace itself with a link to
 * a folder outside (its parent, `<repo>/.git/chatty-worktrees`, is the user's too) had the approved
 * `notes.txt` written there: each write took `realpath(workspace)` afresh. Pinned at the task's start,
 * before the task has run anything, it is the folder the worker was started in. Linux only (the
 * walk from a descriptor is `/proc/self/fd`); a workspace that cannot be opened is not pinned (its
 * writes are then judged by path, and fail by themselves when it is gone). Never rejects.
 */
export async function pinWorkspace(workspace: string): Promise<() => Promise<void>> {
  const held = pins.get(workspace);
  if (held) {
    held.holders++;
    return releaser(workspace, held);
  }
  if (!hasProcFd()) return async () => {};
  const real = await realpath(workspace).catch(() => undefined);
  if (real === undefined) return async () => {};
  const handle = await open(real, constants.O_RDONLY | constants.O_DIRECTORY).catch(() => undefined);
  if (!handle) return async () => {};
  // Opened by path: it must still be that path once opened (not a link put there meanwhile).
  if ((await readlink(`${PROC_FD}/${handle.fd}`).catch(() => undefined)) !== real) {
    await handle.close();
    return async () => {};
  }
  const raced = pins.get(workspace); // pinned by another caller while this one opened it
  if (raced) {
    await handle.close();
    raced.holders++;
    return releaser(workspace, raced);
  }
  const { dev, ino } = await handle.stat();
  const pin: Pin = { real, fd: handle.fd, dev, ino, handle, holders: 1 };
  pins.set(workspace, pin);
  return releaser(workspace, pin);
}

function releaser(workspace: string, pin: Pin): () => Promise<void> {
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    if (--pin.holders > 0) return;
    if (pins.get(workspace) === pin) pins.delete(workspace);
    await pin.handle.close();
  };
}

/** The pinned folder of `workspace` (as given to `pinWorkspace`), if it is pinned. */
export function pinnedWorkspace(workspace: string): PinnedWorkspace | undefined {
  return pins.get(workspace);
}

/**
 * Where an approved command in `workspace` runs: the pinned folder itself, `/proc/self/fd/<pin>` (the
 * command's process inherits the descriptor across the fork and changes into that folder before the
 * shell starts; the descriptor is close-on-exec, so the command never holds it), or `workspace` when
 * it is not pinned. By path, a process sharing the workspace that exchanged the workspace with a link
 * to a folder outside had the approved command (`rm -rf build`, `git clean -fdx`) run there.
 */
export function commandFolder(workspace: string): string {
  const pin = pins.get(workspace);
  return pin ? `${PROC_FD}/${pin.fd}` : workspace;
}
