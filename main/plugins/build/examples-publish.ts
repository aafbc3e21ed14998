import { randomBytes } from 'node:crypto';
import { lstat, rename, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';

/**
 * How the bundled examples' cache is shared by gateways of one user starting at once (the app and
 * a `serve`): each builds an example aside, in `<cache>/building/<name>.tmp-<pid>`, and puts it in
 * place in `<cache>/modules/` with one rename. Nothing here is locked, so nothing is left locked
 * by a gateway killed half way: every step is a rename, which the kernel does whole, and a folder
 * a step leaves behind names its process, which the sweep asks after (`buildingElsewhere`). The
 * folders of builds in progress and of copies being removed lie beside `modules/`, not in it: a
 * gateway scans `modules/` whole, and found another's `<name>.tmp-<pid>` there as module `<name>`.
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
export async function publishBuild(built: string, to: string, asideDir: string, isCurrent: () => Promise<boolean>): Promise<void> {
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
    await moveAside(to, asideDir);
  }
  throw new Error(`${to} was replaced ${MAX_PUBLISH_TRIES} times while this build was put in place (another gateway building other sources?)`);
}

/**
 * Takes what is at `path` out of the way at once (renamed into `asideDir` as
 * `<name>.old-<pid>-<hex>`), then removes it: another gateway walking `path` meanwhile finds it
 * gone, never half removed. Nothing there (another moved it first) is no error.
 */
export async function moveAside(path: string, asideDir: string): Promise<void> {
  const aside = await takenAside(path, asideDir);
  if (aside !== undefined) await rm(aside, { recursive: true, force: true });
}

/** Where a folder's identity is kept between judging it and acting on it: its device and inode. */
export interface Judged {
  dev: number;
  ino: number;
}

/** The identity of what is at `path` now (not followed), or `undefined` when nothing is. */
export async function identityOf(path: string): Promise<Judged | undefined> {
  const st = await lstat(path).catch(() => undefined);
  return st === undefined ? undefined : { dev: st.dev, ino: st.ino };
}

/**
 * Moves aside the copy at `path` that was judged not current (`judged`: its identity, taken
 * before it was judged), and only that one. The decision is made on what the rename took: a copy
 * another gateway put at `path` since the judgment (another identity) is judged again
 * (`isCurrentAt`) and put back when it is this very build, and the answer is `true`: nothing to
 * build. Before, a `serve` rebuilding in the background moved aside whatever was at `path` by then,
 * so another gateway's fresh copy, put there a moment after the judgment, went too (and the
 * other gateway's example with it, until this one's build was in place, 20 s a build later).
 * What stays: between the two renames (a few microseconds) the copy is not at its place.
 */
export async function moveAsideJudged(path: string, judged: Judged | undefined, asideDir: string, isCurrentAt: (dir: string) => Promise<boolean>): Promise<boolean> {
  const aside = await takenAside(path, asideDir);
  if (aside === undefined) return false; // nothing there: the build's own rename decides later
  const took = await identityOf(aside);
  const same = judged !== undefined && took !== undefined && took.dev === judged.dev && took.ino === judged.ino;
  if (!same && (await isCurrentAt(aside))) {
    try {
      await rename(aside, path); // put back: replaces nothing but an empty folder
      return true;
    } catch (err) {
      if (!isTaken(err)) throw err; // a third copy went there meanwhile: the build's rename judges it
    }
  }
  await rm(aside, { recursive: true, force: true });
  return false;
}

/** `path` renamed into `asideDir` (its new path), or `undefined` when nothing was there. */
async function takenAside(path: string, asideDir: string): Promise<string | undefined> {
  const aside = join(asideDir, `${basename(path)}.old-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await rename(path, aside);
    return aside;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** `rename` refused because something is at the place: a folder with files (ENOTEMPTY, EEXIST), or a file or link (ENOTDIR). */
function isTaken(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR';
}

/**
 * Whether `entry` (of the building folder, or of the modules folder, where older gateways still
 * build) is another running process's folder: its build in progress (`<name>.tmp-<pid>`) or a
 * copy it is removing (`<name>.old-<pid>-<hex>`). Two gateways of one user starting at once share
 * the cache, and sweeping the other's build folder as stale made its build fail under it. A
 * folder of this process, or of one that is gone, is a leftover and swept.
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
