import { lstatSync, unlinkSync, type BigIntStats } from 'node:fs';
import { lstat, opendir, unlink } from 'node:fs/promises';
import { baseNamedBy, isGone, looksLikeTemporary, writerNamedBy } from './temporary-name.js';

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
 * `isGone`), and it a regular file with one name, this user's, or with two names, the other the file
 * it was made for in this folder (`isLeftSecondName`: a writer killed between the `link` that gave a
 * new file its name and the `unlink` of its hidden name; the file keeps its own name). A name a branch
 * committed or a worker made without the key, a link put at such a name, a file with another name (a
 * hard link elsewhere), a live writer's file: each is left. With `secondNameOf` (a file in `folder`
 * a write is looking at), a hidden file made for a name over 100 bytes, whose name does not say its
 * file, is one too when its other name is that file. Looks at `MAX_ENTRIES_LOOKED_AT` entries at
 * most; never throws.
 */
export async function removeAbandonedTemporaries(folder: string, secondNameOf?: string): Promise<number> {
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
      const there = await lstat(at, { bigint: true }).catch(() => undefined);
      if (!there?.isFile() || Number(there.uid) !== process.geteuid?.()) continue;
      if (there.nlink !== 1n && !(await isLeftSecondName(folder, entry.name, there, secondNameOf))) continue;
      if (await unlink(at).then(() => true, () => false)) removed++;
    }
  } catch {
    // The folder unreadable or gone: nothing is removed, the write is not concerned.
  }
  return removed;
}

/**
 * Whether the hidden file `name` in `folder` (`there`, its `lstat`) is one whose new file took its
 * name by `link` and whose writer was gone before its `unlink` (`linkAsNew`): two names, the other
 * the one its name says it was made for (`baseNamedBy`), in this folder, the same file. Left, that
 * file has two names for good, so every later write of it was refused (`has 2 names`) before anyone
 * was asked, and nothing removed the hidden name. Its removal loses nothing: the file keeps its own
 * name. A file with any other second name (a hard link elsewhere, a third name) is not one.
 */
async function isLeftSecondName(folder: string, name: string, there: BigIntStats, secondNameOf: string | undefined): Promise<boolean> {
  if (there.nlink !== 2n) return false;
  // `.chatty-write-…` (made for a name over 100 bytes) does not say its file: the one looked at may be it.
  const base = baseNamedBy(name) ?? (name.startsWith('.chatty-write-') ? secondNameOf : undefined);
  if (base === undefined) return false;
  const named = await lstat(`${folder}/${base}`, { bigint: true }).catch(() => undefined);
  return named !== undefined && named.isFile() && named.dev === there.dev && named.ino === there.ino && named.nlink === 2n;
}
