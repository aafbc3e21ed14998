// The preload each window runs, as a copy this process made: Electron reads `webPreferences.preload`
// from the disk at every load of the page (a reload, a crashed page loaded again), so pointing it at
// the package's own file trusted whatever that file held at each load: a write through a hard link
// an agent made to `node_modules/chatty-protocol-gateway/out/preload/index.cjs` (or by anyone who
// may write the package's folder) became the script that answers every later approval. The copy is
// read once from where the source really lies (the package's own preload must lie in the package's
// folder; any source's folder is kept from the agents' workspace), written as a new file (a new
// inode at each launch: a hard link made during this launch, to an earlier copy or to the
// package's file, reaches nothing a window runs until the next launch copies the package's file
// again), read-only, in a folder only this user could have changed (it and every folder above it),
// and named by its content's digest.
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, realpathSync, renameSync, rmSync, unlinkSync, writeSync, type BigIntStats } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { isInside } from '../broker/spawn-context.js';
import { whyFolderChainOpen, whyOpenToOthers } from '../owner-only/closed-to-others.js';
import { currentUid } from '../owner-only/platform.js';
import { readRegularFileSync } from '../owner-only/regular-file.js';
import { PACKAGE_ROOT, preloadPath } from './package-root.js';
import { keepFromWorkspaces } from './pages-guard.js';

/** The preload is one small file (a few KiB): anything larger is not the package's. */
export const MAX_PRELOAD_BYTES = 1024 * 1024;
/** The folder, under the one given (the app's userData), that holds the copies. */
export const PRELOAD_COPY_FOLDER = 'chatty-preload';

/**
 * The copies this process made (the paths preloadCopy returned, in folders it checked), with the
 * bytes read at launch, the file last written there (undefined once someone else changed it: the
 * next renewal writes it again) and a descriptor of that file, held so it can still be judged when
 * its name is gone: a bridge renews them at each load of its window (renewPreloadCopies) and checks
 * them at each call of its page (checkPreloadCopies).
 */
const copiesMade = new Map<string, CopyMade>();

interface CopyMade {
  bytes: Buffer;
  written: WrittenFile | undefined;
  /** The file last written, open (read-write as it was made): what is judged when nothing is at its name. */
  held: number | undefined;
}

/** The file `made` held is let go (written over, or the copy forgotten). */
function letGo(made: CopyMade): void {
  if (made.held !== undefined) closeSync(made.held);
  made.held = undefined;
}

/**
 * The file this process wrote at a copy's name, as the kernel stamped it once in place: a hard
 * link made to it, a chmod or a write moves its ctime (which no one can set back), a file renamed
 * over it is another inode.
 */
interface WrittenFile {
  dev: bigint;
  ino: bigint;
  ctimeNs: bigint;
  mtimeNs: bigint;
  size: bigint;
  mode: bigint;
}

/**
 * How many times a copy was found changed by someone else since this process wrote it, ever: a
 * bridge refuses its page's calls when this grew since its document's preload was renewed
 * (that document may have run what was written).
 */
let tamperings = 0;
let lastChange: { copy: string; change: string } | undefined;

/** A copy was found changed by someone else: counted, and every bridge told at once (onPreloadChange). */
function countChange(copy: string, change: string): void {
  tamperings += 1;
  lastChange = { copy, change };
  for (const listener of [...changeListeners]) listener();
}

/**
 * The bridges to tell when a change is counted, whichever check found it (another window's call
 * or load, a second preloadCopy): each judges its own page then, not at its own next call (before,
 * a change found at one window's call refused that window only, and the other window, the root's
 * human, its page loaded from the same copy, was still sent every approval, which waited there).
 */
const changeListeners = new Set<() => void>();

/** `listener` runs each time a copy is found changed by someone else (after it is counted); returns the function that stops it. */
export function onPreloadChange(listener: () => void): () => void {
  changeListeners.add(listener);
  return () => {
    changeListeners.delete(listener);
  };
}

/** The changes preloadCopy found (and counted) before writing, reported by the next check; the latest few. */
const unreported: { copy: string; change: string }[] = [];
const MAX_UNREPORTED = 16;

/** The names preloadCopy writes in its folder: a copy, and the new file renamed over it. */
const COPY_NAME = /^index-[0-9a-f]{64}\.cjs$/;
const TEMP_NAME = /^\.index-\d+-[0-9a-f]{16}\.tmp$/;

/**
 * Copies the preload (`source`, default this package's `preloadPath`) into
 * `<folder>/chatty-preload/` as a new read-only file `index-<sha256>.cjs`, and returns its path:
 * give it to `secureWebPreferences`. The source is read from its folder's real path, resolved once:
 * the default must lie in this package's folder, and any other source's folder is kept apart from
 * the agents' workspace as a pages folder is (pages-guard.ts). The copy folder is made owner-only
 * (refused when it is a link, or it or a folder above it is another user's or writable by others)
 * and kept apart from the workspace the same way; the other copies in it (earlier preloads, files
 * left by a crash) are removed. Throws, saying why, when any of this cannot be done.
 */
export function preloadCopy(folder: string, source?: string): string {
  // First, what is there now is judged: writing a copy anew (a second window's) or removing one
  // would forget a change that a window open since may have run, never counted.
  unreported.push(...changedCopies());
  unreported.splice(0, unreported.length - MAX_UNREPORTED); // counted all the same: the log keeps the latest
  const from = preloadSource(source);
  const read = readRegularFileSync(from, { maxBytes: MAX_PRELOAD_BYTES });
  if (!read.ok) throw new Error(`preloadCopy: the package's preload ${source ?? preloadPath} cannot be copied: ${read.message}`);
  const dir = ownerOnlyCopyFolder(join(folder, PRELOAD_COPY_FOLDER));
  keepFromWorkspaces(dir, 'the preload copy folder');
  const name = `index-${createHash('sha256').update(read.bytes).digest('hex')}.cjs`;
  const copy = join(dir, name);
  const { written, fd } = writeNewFile(dir, copy, read.bytes);
  removeOtherCopies(dir, name);
  for (const [path, made] of copiesMade) {
    if (dirname(path) !== dir) continue;
    letGo(made); // removed just now, or written over
    if (path !== copy) copiesMade.delete(path);
  }
  copiesMade.set(copy, { bytes: read.bytes, written, held: fd });
  return copy;
}

/**
 * Every copy preloadCopy made in this process, as a new document of a bridged window's top frame
 * starts, just before Electron reads its preload (Electron tells no one which file a window's
 * preload is, so each copy made is seen to): its folder judged again as at launch, and the copy,
 * if anyone changed it since this process wrote it (a hard link made to it, an agent's
 * `ln <copy> notes.cjs`, then `chmod` and a plain write of `notes.cjs`; a file renamed over it),
 * written again as a new file of the bytes read at launch, which that link does not reach. A copy
 * nobody touched is left as it is (nothing is written at a load: a page starting navigations in a
 * loop costs a stat and a small read each). Returns the copies found changed, saying how. Throws,
 * saying why, when a copy cannot be renewed: then the load's preload is not one to trust.
 */
export function renewPreloadCopies(): { copy: string; change: string }[] {
  const changed: { copy: string; change: string }[] = [];
  for (const [copy, made] of copiesMade) {
    const dir = ownerOnlyCopyFolder(dirname(copy));
    if (join(dir, basename(copy)) !== copy) throw new Error(`preloadCopy: the copy folder ${dirname(copy)} now leads to ${dir}`);
    const change = made.written === undefined ? 'changed by someone else (seen at a call)' : changeTo(copy, made, made.written);
    if (change === SAME) continue;
    if (change !== GONE) {
      if (made.written !== undefined) countChange(copy, change);
      changed.push({ copy, change });
    }
    made.written = undefined; // until written: a failure below leaves it to be written again
    letGo(made);
    ({ written: made.written, fd: made.held } = writeNewFile(dir, copy, made.bytes));
  }
  return changed;
}

/**
 * Every copy preloadCopy made checked as it lies now (at a call of a bridged page, whose preload
 * Electron read some time after its renewal): the copies someone else changed since this process
 * wrote them, saying how. Each such change is counted once (preloadTamperings), and the next
 * renewal writes the copy again. Costs a stat and a read of the copy (a few KiB) per copy.
 */
export function checkPreloadCopies(): { copy: string; change: string }[] {
  return [...unreported.splice(0), ...changedCopies()];
}

/** The copies changed by someone else since this process wrote them and not seen before, each counted once. */
function changedCopies(): { copy: string; change: string }[] {
  const changed: { copy: string; change: string }[] = [];
  for (const [copy, made] of copiesMade) {
    if (made.written === undefined) continue; // counted already; renewed at the next load
    const change = changeTo(copy, made, made.written);
    if (change === SAME || change === GONE) continue; // a copy gone untouched runs nothing; the next load writes it again
    made.written = undefined;
    countChange(copy, change);
    changed.push({ copy, change });
  }
  return changed;
}

/** The last change found to a copy (which copy, and how), for a refusal to name. */
export function lastPreloadChange(): { copy: string; change: string } | undefined {
  return lastChange;
}

/** How many times a copy was found changed by someone else in this process (see `tamperings`). */
export function preloadTamperings(): number {
  return tamperings;
}

/**
 * How the file at `copy` is no longer the one this process wrote (`written`, holding
 * `made.bytes`); SAME when it still is (the same inode, one name, its ctime and mtime unmoved, its
 * bytes). Nothing at its name is judged by goneChange. Read through a descriptor of what is at the
 * name (no name followed, no FIFO waited on).
 */
function changeTo(copy: string, made: CopyMade, written: WrittenFile): string | typeof SAME | typeof GONE {
  let fd: number;
  try {
    fd = openSync(copy, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return goneChange(copy, made, written);
    return `it cannot be opened (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
  try {
    const now = fstatSync(fd, { bigint: true });
    if (now.nlink > 1n) return `it has ${now.nlink} names (a hard link to it)`;
    if (!sameFile(now, written)) return 'it is not the file written (replaced, or its mode, size or times changed)';
    if (!holds(fd, made.bytes)) return 'its bytes are not the preload\'s';
    return SAME;
  } catch (err) {
    return `it cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  } finally {
    closeSync(fd);
  }
}

/**
 * Nothing is at the copy's name. What a window read from it may still have been someone else's: a
 * link made to the copy and written (the renderer reading those bytes), then the copy moved or
 * removed (31e9744 took every copy gone for no change, and such a page was answered). So the file
 * written is judged through the descriptor held: still linked somewhere (the copy renamed away,
 * which moves its ctime; or its folder moved, which does not), by all it was stamped with; removed
 * (the unlink moves its ctime itself), as a change whatever its size, mode, mtime and bytes: the
 * agent's bytes put back to the nanosecond, only the ctime could tell, which the unlink moves, and a
 * page (bridged, or loaded before its bridge was attached) may have run them. GONE, no change, only
 * for the file untouched, ctime included, with its folder moved whole.
 */
function goneChange(copy: string, made: CopyMade, written: WrittenFile): string | typeof GONE {
  if (made.held === undefined) return GONE; // nothing written is held: nothing was written
  try {
    const now = fstatSync(made.held, { bigint: true });
    const untouched = now.size === written.size && now.mode === written.mode && now.mtimeNs === written.mtimeNs && holds(made.held, made.bytes);
    if (now.nlink > 0n) return untouched && sameFile(now, written) ? GONE : 'it was moved away from its name (renamed, or changed before)';
    if (!untouched) return 'it was changed, then removed from its name';
    if (folderThere(dirname(copy))) return 'it was removed from its folder (the copy alone taken away)';
    // Removed with its folder, all but the ctime as written: an earlier launch's userData removed,
    // or the agent's link, write and the bytes, mode and mtime put back, then rm -r of the folder.
    // Nothing tells the two apart, so it is a change, bridge or none: a window's page may have
    // loaded from it before its bridge was attached (753067d let it go while no bridge was there,
    // and such a page, its bridge attached after, was answered). A page loaded after it is judged
    // from its own load's renewal, so the count refuses only pages that read the preload before.
    return 'it was removed with its folder (its bytes, mode and mtime as written, which can be put back)';
  } catch (err) {
    return `it is gone and cannot be judged (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
}

/** Whether the file open at `fd` holds exactly `bytes`. */
function holds(fd: number, bytes: Buffer): boolean {
  const read = Buffer.alloc(bytes.length + 1);
  let filled = 0;
  for (let got = -1; got !== 0 && filled < read.length; filled += got) got = readSync(fd, read, filled, read.length - filled, filled);
  return read.subarray(0, filled).equals(bytes);
}

function folderThere(dir: string): boolean {
  try {
    lstatSync(dir);
    return true;
  } catch {
    return false;
  }
}

const SAME = Symbol('the file written');
const GONE = Symbol('nothing at its name');

function stampOf(stat: BigIntStats): WrittenFile {
  return { dev: stat.dev, ino: stat.ino, ctimeNs: stat.ctimeNs, mtimeNs: stat.mtimeNs, size: stat.size, mode: stat.mode };
}

function sameFile(stat: BigIntStats, written: WrittenFile): boolean {
  const now = stampOf(stat);
  return (Object.keys(written) as (keyof WrittenFile)[]).every((key) => now[key] === written[key]);
}

/**
 * The path to read the preload from: its folder resolved once to a real path (the file's own name
 * is then opened with O_NOFOLLOW). The default source's folder must lie in this package's real
 * folder: `out/preload` a link to a build kept elsewhere (in the agents' workspace, say) made the
 * agents' plain write there the next launch's preload. The package's folder is already kept from
 * bridged workspaces (pages-guard.ts's own-folder rule); another source's folder is kept here.
 */
function preloadSource(source: string | undefined): string {
  const path = resolve(source ?? preloadPath);
  let real: string;
  try {
    real = realpathSync(dirname(path));
  } catch (err) {
    throw new Error(`preloadCopy: the preload's folder ${dirname(path)} cannot be resolved: ${(err as Error).message}`);
  }
  if (source === undefined) {
    const root = realpathSync(PACKAGE_ROOT);
    if (!isInside(real, root)) {
      throw new Error(`preloadCopy: this package's out/preload leads out of its folder ${root} (to ${real}); the preload each window runs must lie in it`);
    }
  } else {
    keepFromWorkspaces(real, 'the preload source folder');
  }
  return join(real, basename(path));
}

/**
 * `dir` made (0700) or, when it is there, judged through a descriptor (not a link, this user's,
 * writable by nobody else) and made owner-only; then every folder above it checked as the one rule
 * for a trusted folder says (whyFolderChainOpen): whoever may write a folder above could rename the
 * copy folder away and put theirs at its name, and the path the window was given, read again at
 * every load, would be their file. Returns its real path, where the copy is made.
 */
function ownerOnlyCopyFolder(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const uid = currentUid();
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    throw new Error(`preloadCopy: ${dir} is not a folder (a link?): the preload is copied only into a folder of this user's (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  try {
    const open = whyOpenToOthers(fstatSync(fd), uid);
    if (open !== undefined) throw new Error(`preloadCopy: ${dir} ${open}: the preload is copied only into a folder no one else may write`);
    fchmodSync(fd, 0o700); // others could read it (an earlier mkdir, a restored backup): owner-only, as the docs say
  } finally {
    closeSync(fd);
  }
  const why = whyFolderChainOpen(dir, uid);
  if (why !== undefined) throw new Error(`preloadCopy: ${why}: the preload is copied only into a folder no one else may write or replace`);
  return realpathSync(dir);
}

/**
 * `bytes` as a new file renamed over `copy`: never a write into a file that is there (it may have
 * other names). Returns the file as stamped once in place (a rename moves its ctime), taken
 * through the descriptor written, and checked to be what the name leads to, with that descriptor,
 * left open (the caller holds it: the file is judged through it once its name is gone). No fsync:
 * each launch writes the copy again. On any failure the new file is removed, the descriptor closed,
 * and the error says what was in the way.
 */
function writeNewFile(dir: string, copy: string, bytes: Buffer): { written: WrittenFile; fd: number } {
  const temp = join(dir, `.index-${process.pid}-${randomBytes(8).toString('hex')}.tmp`);
  const fd = openSync(temp, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o400);
  let renamed = false;
  try {
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
    renameSync(temp, copy);
    renamed = true;
    const written = stampOf(fstatSync(fd, { bigint: true }));
    const there = lstatSync(copy, { bigint: true });
    if (there.ino !== written.ino || there.dev !== written.dev) throw new Error('another file was put at its name as it was written');
    return { written, fd };
  } catch (err) {
    closeSync(fd);
    if (!renamed) rmSync(temp, { force: true });
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'EISDIR' ? 'a folder is in the way (EISDIR)' : (code ?? (err as Error).message);
    throw new Error(`preloadCopy: cannot put the copy at ${copy}: ${why}`, { cause: err });
  }
}

/**
 * The copies of other preloads (an earlier version, another source) and new files a crash left,
 * removed: the folder is this user's alone, so only this app's launches wrote them. A folder at
 * such a name is not ours to remove and stays.
 */
function removeOtherCopies(dir: string, keep: string): void {
  for (const name of readdirSync(dir)) {
    if (name === keep || !(COPY_NAME.test(name) || TEMP_NAME.test(name))) continue;
    const path = join(dir, name);
    if (!lstatSync(path).isDirectory()) unlinkSync(path);
  }
}
