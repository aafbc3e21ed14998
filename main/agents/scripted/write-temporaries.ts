import { lstatSync, unlinkSync, type BigIntStats } from 'node:fs';

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
