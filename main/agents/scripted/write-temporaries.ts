import { lstatSync, unlinkSync, type BigIntStats } from 'node:fs';
import { lstat, opendir, unlink } from 'node:fs/promises';
import { isGone, looksLikeTemporary, writerNamedBy } from './temporary-name.js';

/** Which file a temporary is: it is removed only while it is still that file. */
interface Identity {
  dev: bigint;
  ino: bigint;
}

/**
 * The files approved writes are making beside the files they replace (`writeReplacing`), by the
 * path they were made at (through their folder's descriptor), until each is renamed over its file or
 * removed. The worker told to stop (SIGTERM) exits at once (`process.exit`), and a write in flight
 * then left its hidden `.<name>.chatty-write-<hex>` in the workspace for good.
 */
const making = new Map<string, Identity>();
let removedAtExit = false;

/**
 * Records the file just made at `path` (`made`: its descriptor's `fstat`) until the returned `done`
 * is called; if the process exits before, it is removed then (`removeTemporariesLeft`).
 */
export function makingTemporary(path: string, made: BigIntStats): () => void {
  if (!removedAtExit) {
    removedAtExit = true;
    process.on('exit', removeTemporariesLeft);
  }
  making.set(path, { dev: made.dev, ino: made.ino });
  return () => {
    making.delete(path);
  };
}

/**
 * Removes every temporary still being made, each only if its path still names the file this
 * process made there (dev and inode): a file a process sharing the workspace put at that name after
 * it was renamed away is theirs, and stays. Synchronous, for the `exit` event.
 */
export function removeTemporariesLeft(): void {
  for (const [path, made] of making) {
    try {
      const there = lstatSync(path, { bigint: true });
      if (there.dev === made.dev && there.ino === made.ino) unlinkSync(path);
    } catch {
      // Gone already (renamed over its file, or its folder let go of): nothing of ours is left there.
    }
  }
  making.clear();
}

/** How many entries of a folder a write looks at for files dead writers left (a folder of millions costs no more). */
export const MAX_ENTRIES_LOOKED_AT = 100_000;

/**
 * Removes from the folder `folder` (its descriptor's path, `/proc/self/fd/<fd>`: never reached
 * through a link) each hidden file a write left when its process ended without exiting (SIGKILL, the
 * out-of-memory killer, the machine going down), which nothing else ever removes. Only a file provably
 * one: its name sealed with this user's key and naming a writer that is gone (`writerNamedBy`,
 * `isGone`), and it a regular file with one name, this user's. A name a branch committed or a worker
 * made without the key, a link put at such a name, a file with another name (a hard link), a live
 * writer's file: each is left. Looks at `MAX_ENTRIES_LOOKED_AT` entries at most; never throws.
 */
export async function removeAbandonedTemporaries(folder: string): Promise<number> {
  let removed = 0;
  try {
    const dir = await opendir(folder);
    let looked = 0;
    for await (const entry of dir) {
      if (++looked > MAX_ENTRIES_LOOKED_AT) break;
      if (!looksLikeTemporary(entry.name)) continue;
      const writer = writerNamedBy(entry.name);
      if (writer === undefined || !isGone(writer)) continue;
      const at = `${folder}/${entry.name}`; // the last part is never followed by lstat nor unlink
      const there = await lstat(at).catch(() => undefined);
      if (!there?.isFile() || there.nlink !== 1 || there.uid !== process.geteuid?.()) continue;
      if (await unlink(at).then(() => true, () => false)) removed++;
    }
  } catch {
    // The folder unreadable or gone: nothing is removed, the write is not concerned.
  }
  return removed;
}
