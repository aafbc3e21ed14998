import { randomBytes } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';

/**
 * How the bundled examples' cache is shared by gateways of one user starting at once (the app and
 * a `serve`): each builds an example aside, in `<name>.tmp-<pid>`, and puts it in place with one
 * rename. Nothing here is locked, so nothing is left locked by a gateway killed half way: every
 * step is a rename, which the kernel does whole, and a folder a step leaves behind names its
 * process, which the sweep asks after (`buildingElsewhere`).
 */

/** How often a build finding another copy at its place moves it aside and tries again. */
const MAX_PUBLISH_TRIES = 8;

/**
 * Puts the build at `built` in place at `to` by one rename. A copy already there (another gateway
 * finished first) is kept when `isCurrent` says it is this very build (same recipe, same sources,
 * whole): `built` is dropped and the other's is used, never removed under it. Any other copy is
 * moved aside whole (`moveAside`) and the rename tried again. Before, `to` was removed by path and
 * `built` renamed after: a second gateway's rename met the first's fresh copy (ENOTEMPTY), or its
 * `rm` emptied the copy another had just put there while that one walked it.
 */
export async function publishBuild(built: string, to: string, isCurrent: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; tries < MAX_PUBLISH_TRIES; tries++) {
    try {
      await rename(built, to); // replaces nothing but an empty folder: never another's copy
      return;
    } catch (err) {
      if (!isTaken(err)) throw err;
    }
    if (await isCurrent()) {
      await rm(built, { recursive: true, force: true });
      return;
    }
    await moveAside(to);
  }
  throw new Error(`${to} was replaced ${MAX_PUBLISH_TRIES} times while this build was put in place (another gateway building other sources?)`);
}

/**
 * Takes what is at `path` out of the way at once (renamed to `<path>.old-<pid>-<hex>`), then
 * removes it: another gateway walking `path` meanwhile finds it gone, never half removed. Nothing
 * there (another moved it first) is no error.
 */
export async function moveAside(path: string): Promise<void> {
  const aside = `${path}.old-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  await rm(aside, { recursive: true, force: true });
}

/** `rename` refused because something is at the place: a folder with files (ENOTEMPTY, EEXIST), or a file or link (ENOTDIR). */
function isTaken(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR';
}

/**
 * Whether `entry` of the modules folder is another running process's folder: its build in
 * progress (`<name>.tmp-<pid>`) or a copy it is removing (`<name>.old-<pid>-<hex>`). Two gateways
 * of one user starting at once share the cache, and sweeping the other's build folder as stale
 * made its build fail under it. A folder of this process, or of one that is gone, is a leftover
 * and swept.
 */
export function buildingElsewhere(entry: string): boolean {
  const pid = Number(/\.(?:tmp-(\d{1,10})|old-(\d{1,10})-[0-9a-f]+)$/.exec(entry)?.slice(1).find((p) => p !== undefined) ?? NaN);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0); // no signal sent: only asks whether the process is there
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // there, another user's
  }
}
