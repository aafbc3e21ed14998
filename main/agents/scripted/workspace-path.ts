import { close, constants, fchmod, fchown, fdatasync, fstatSync, openSync, writeFile, type BigIntStats, type Stats } from 'node:fs';
import { access, link, lstat, mkdir, open, readlink, realpath, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import { readRegularFile, type RegularFileLimits, type RegularFileRead } from '../../owner-only/regular-file.js';
import { PROC_FD, hasProcFd, pinnedWorkspace, type PinnedWorkspace } from './workspace-pin.js';
import { isAsSeen, seenOf, type OldFileSeen } from './old-file-seen.js';
import { looksLikeTemporary, temporaryName } from './temporary-name.js';
import { makingTemporary, removeAbandonedTemporaries } from './write-temporaries.js';

/** A path the scripted agent may not write, and why (said to the task's caller; the human is never asked). */
export class WorkspaceRefusal extends Error {
  override readonly name = 'WorkspaceRefusal';
}

/**
 * Why `path` is refused before it is looked at on disk, or `undefined`. The rule behind it: the
 * path a human approves is byte for byte the path written, read as the kernel reads it. So a
 * path that reads one way to a person and another to the kernel is refused rather than read
 * either way: a backslash (an ordinary character of a name on Linux and macOS, a folder separator
 * to a person who knows Windows: `.husky\\pre-commit` looks like the git hook), and a path ending
 * in `/` or `/.` (a folder, not a file). And a file named like the hidden file a write is made in
 * (`.chatty-write-`, `looksLikeTemporary`): a name copied from one seen while a write was in flight is
 * sealed, and a later write into its folder removed the approved file as a dead writer's hidden file.
 * And a lone surrogate (half of a UTF-16 pair, which a JSON string may hold): Node writes U+FFFD's
 * bytes for it, so the person asked about `a<U+DC00>.txt` had `a<U+FFFD>.txt` written (replaced, when there).
 * One rule for the scripted and the LLM agent.
 */
function pathShapeRefusal(path: string): string | undefined {
  const quoted = JSON.stringify(path);
  if (path === '') return 'an empty path';
  if (path.includes('\0')) return `${quoted} contains a NUL byte`;
  // Not a character: the kernel is given U+FFFD's bytes for it, so the name written is not the one asked about.
  const lone = /\p{Cs}/u.exec(path);
  if (lone) return `${quoted} contains a lone surrogate (U+${lone[0].charCodeAt(0).toString(16).toUpperCase()}), which is no character: the file would be named with U+FFFD in its place`;
  if (isAbsolute(path)) return `${quoted} is absolute: a path must be relative to the workspace`;
  if (path.includes('\\')) return `${quoted} contains a backslash, which would be part of the name here but reads as a folder separator; use "/" between folders`;
  if (path.endsWith('/')) return `${quoted} ends with "/": it names a folder, not a file`;
  if (path.endsWith('/.')) return `${quoted} ends with ".": it names a folder, not a file`;
  // In any case: in a case-insensitive folder (macOS's, ext4's or tmpfs's +F) `.CHATTY-WRITE-` names a hidden file's name too.
  if (looksLikeTemporary(path.slice(path.lastIndexOf('/') + 1).toLowerCase())) {
    return `${quoted} is named like the hidden file a write is made in (".chatty-write-"): a later write into its folder could remove it as one a stopped write left`;
  }
  return undefined;
}

/**
 * Where `path` (as the script wrote it) lands inside `workspace`, checked so that a write cannot
 * leave the workspace:
 *
 * - refused outright: an empty path, an absolute one, one with a `..` segment, one with a NUL byte;
 * - refused because it would be read another way than the human reads it (`pathShapeRefusal`): a
 *   backslash, a trailing `/` or a final `.`;
 * - the deepest part of it that exists is resolved with `realpath` (symlinks as the kernel follows
 *   them) and must be the workspace's real path or inside it (`/w/tree-evil` is not inside `/w/tree`);
 * - no folder on the way may be a symbolic link, even one that stays inside: the file written
 *   would not be the one the person read (`hooks/pre-commit` written as `.husky/pre-commit`);
 * - the file itself, when it exists, must be a regular file, not a symlink (the write would follow
 *   it) nor a directory, with no other name (a hard link: the write would change it there too);
 * - the user must be allowed to write the file, when it exists, and the deepest folder of the path
 *   that exists (`mayWrite`): the file is replaced by a new one made in its folder, so a folder the
 *   user may not write is refused here, before the person is asked, saying so; so is a file whose
 *   owner and group the new file could not be given (`mayKeepOwner`).
 *
 * Returns the absolute path to write. Call it again right before writing (the tree may have
 * changed while the human decided), with `createParents` then, and open the file `O_NOFOLLOW`.
 */
export async function resolveInWorkspace(workspace: string, path: string, options: { createParents?: boolean } = {}): Promise<string> {
  const quoted = JSON.stringify(path);
  const shape = pathShapeRefusal(path);
  if (shape !== undefined) throw new WorkspaceRefusal(shape);
  // Split as the kernel splits: on "/" only. Empty and "." segments name the same folder to it.
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw new WorkspaceRefusal(`${quoted} has a ".." segment: a path must stay inside the workspace`);
  if (segments.length === 0) throw new WorkspaceRefusal(`${quoted} names the workspace itself, not a file`);

  const start = await workspaceRoot(workspace, quoted);
  const root = start.real;
  const inside = (real: string): boolean => real === root || real.startsWith(root.endsWith(sep) ? root : root + sep);

  // The parents: every one that exists must resolve inside and be a folder, not a link to one;
  // missing ones are made (when asked) and checked the same way.
  let dir = root;
  let deepest: string | undefined; // the deepest folder that exists, once a missing one is met
  for (const segment of segments.slice(0, -1)) {
    const next = join(dir, segment);
    let real = await realpath(next).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw new WorkspaceRefusal(`${quoted} cannot be resolved (${err.code ?? err.message})`);
    });
    if (real === undefined) {
      if (await isLink(next)) throw new WorkspaceRefusal(`${quoted} goes through ${JSON.stringify(relative(root, next))}, a symbolic link to nothing`);
      if (deepest === undefined) {
        deepest = dir;
        await mayWrite(dir, quoted, relative(root, dir), 'folder');
      }
      if (!options.createParents) {
        dir = next; // the rest does not exist yet: nothing there can point out
        continue;
      }
      await makeFolderIn(start, dir, segment, quoted);
      // Made (or found made) a moment ago: a process sharing the workspace may have put a link to
      // nothing there since, or removed it; that is a refusal naming it, not a raw ENOENT.
      real = await realpath(next).catch((err: NodeJS.ErrnoException) => {
        throw changedWhileWritten(quoted, relative(root, next), err);
      });
    }
    if (!inside(real)) throw new WorkspaceRefusal(`${quoted} leads out of the workspace (really ${JSON.stringify(real)})`);
    // A link that stays inside is refused too: the person reads `hooks/pre-commit`, the kernel
    // writes `.husky/pre-commit`: the path shown to the person must be the file written.
    if (await isLink(next)) {
      throw new WorkspaceRefusal(`${quoted} goes through ${JSON.stringify(relative(root, next))}, a symbolic link (to ${JSON.stringify(relative(root, real) || '.')}): write the path as it really is`);
    }
    // On with the name as written, not `real`: `real` was read before `isLink` looked, so a folder
    // swapped for a link (to `.husky`, inside) while `realpath` ran, and back before `isLink`, would
    // have the write land where the link led (`.husky/pre-commit` for `docs/a/pre-commit`). Not a
    // link, the name is the folder; a link put there later is refused by the descriptor walk.
    dir = next;
  }

  const file = join(dir, segments[segments.length - 1]!);
  const look = (): Promise<Stats | undefined> =>
    lstat(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return undefined;
      throw new WorkspaceRefusal(`${quoted} cannot be examined (${err.code ?? err.message})`);
    });
  let stat = await look();
  // Two names may be a new file whose writer was killed between its link and its unlink (linkAsNew):
  // its hidden name is the second, and only a sweep of its folder removes it; else refused for good.
  if (stat?.isFile() && stat.nlink === 2 && (await sweptFolder(start, dir, quoted, basename(file))) > 0) stat = await look();
  if (stat?.isSymbolicLink()) throw new WorkspaceRefusal(`${quoted} is a symlink: the agent writes only regular files in its workspace`);
  if (stat && !stat.isFile()) throw new WorkspaceRefusal(`${quoted} is not a regular file`);
  // A file with another name (a hard link, perhaps outside the workspace) would change there too.
  if (stat && stat.nlink > 1) throw new WorkspaceRefusal(`${quoted} has ${stat.nlink} names (hard links): writing it would change the file under its other names too`);
  if (stat) await mayWrite(file, quoted, relative(root, file), 'file');
  if (deepest === undefined) await mayWrite(dir, quoted, relative(root, dir), 'folder');
  if (stat) await mayKeepOwner(stat, dir, quoted);
  return file;
}

/**
 * Removes from the folder `dir` (reached by descriptors, never through a link) what dead writers
 * left in it (`removeAbandonedTemporaries`), a hidden second name of its file `name` too; how many.
 * None where `/proc/self/fd` is absent or the folder is not there.
 */
async function sweptFolder(start: WorkspaceRoot, dir: string, quoted: string, name: string): Promise<number> {
  if (!hasProcFd()) return 0;
  const folder = await openFolderInside(start, dir, quoted, 'none');
  if (folder === undefined) return 0;
  try {
    return await removeAbandonedTemporaries(`${PROC_FD}/${folder.fd}`, name);
  } finally {
    await folder.close();
  }
}

/**
 * Refuses, before anyone is asked, a file whose owner and group the new file a write makes in its
 * place could not be given (`keepOwnerAndMode` refuses it then: `EPERM`): another user's file, or one
 * of a group this user is not in, unless the new file takes that group anyway (a set-group-id folder's).
 * Root may give any. A folder gone since it was looked at is left to the write's own checks.
 */
async function mayKeepOwner(old: { uid: number; gid: number }, dir: string, quoted: string): Promise<void> {
  const euid = process.geteuid?.();
  if (euid === undefined || euid === 0) return;
  const folder = await lstat(dir).catch(() => undefined);
  if (folder === undefined) return;
  const newGroup = folder.mode & 0o2000 ? folder.gid : process.getegid!(); // set-group-id: its files take its group
  const inGroup = old.gid === newGroup || old.gid === process.getegid!() || process.getgroups!().includes(old.gid);
  if (old.uid !== euid || !inGroup) throw ownerNotKept(quoted, old);
}

/** The refusal for a file whose owner and group a new file cannot be given by this user (before or after the person is asked). */
function ownerNotKept(quoted: string, old: { uid: number; gid: number }): WorkspaceRefusal {
  return new WorkspaceRefusal(
    `${quoted} could not be written: it is replaced by a new file, which this user cannot give its owner and group (user ${old.uid}, group ${old.gid}): the file is as it was`,
  );
}

/**
 * Refuses, saying why, when this user may not write `path` (`access(W_OK)`, which follows a link: a
 * descriptor's `/proc/self/fd/<fd>` asks about the file held open): a `file` the write would replace,
 * or the `folder` the new file is made in (`name` relative to the workspace). A file that is running
 * (`ETXTBSY`) may be replaced: a new file takes its name, the running one is not written.
 */
async function mayWrite(path: string, quoted: string, name: string, what: 'file' | 'folder'): Promise<void> {
  await access(path, constants.W_OK).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ETXTBSY') return;
    // Gone since it was looked at (a process sharing the workspace swapped it, or a folder on its
    // way, for a link): not judged by this path; the write judges what it opens, through the pin.
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return;
    throw notWritable(quoted, name, what, err);
  });
}

/** Whether `err` says this user may not write there (its permissions, its owner, a read-only file system). */
function isNotAllowed(err: NodeJS.ErrnoException): boolean {
  return err.code === 'EACCES' || err.code === 'EPERM' || err.code === 'EROFS';
}

/** The refusal for a file or a folder (`name`) this user may not write (`isNotAllowed`), or `changedWhileWritten`. */
function notWritable(quoted: string, name: string, what: 'file' | 'folder', err: NodeJS.ErrnoException): WorkspaceRefusal {
  if (!isNotAllowed(err)) return changedWhileWritten(quoted, name, err);
  if (what === 'file') return new WorkspaceRefusal(`${quoted} is a file this user may not write (${err.code}): nothing was written`);
  return new WorkspaceRefusal(
    `${quoted} is in a folder this user may not write (${JSON.stringify(name || '.')}: ${err.code}): a write makes the new file in that folder and renames it over the old one, so nothing was written`,
  );
}

/**
 * The refusal for a write whose file is not the one its approval's diff stat was counted against
 * (`OldFileSeen`): made, replaced, edited or removed while the person decided. Nothing is written.
 */
function changedSinceAsked(quoted: string): WorkspaceRefusal {
  return new WorkspaceRefusal(
    `${quoted} was changed after the person was asked to approve this write (made, replaced, edited or removed since its diff stat was counted): nothing was written`,
  );
}

/** Whether `path` is a symbolic link (false when nothing is there). */
async function isLink(path: string): Promise<boolean> {
  return lstat(path).then(
    (stat) => stat.isSymbolicLink(),
    () => false,
  );
}

/**
 * The refusal for a write whose own step failed because a process sharing the workspace changed
 * `name` (relative to the workspace) meanwhile: a folder removed, replaced by a link (to nothing),
 * the file replaced by a folder. It names the path as approved and what was found, never a raw
 * `ENOENT` on a `/proc/self/fd/…` path: the LLM agent reads a refusal and goes on, a raw error ended
 * its task. Nothing was written to the file.
 */
function changedWhileWritten(quoted: string, name: string, err: NodeJS.ErrnoException): WorkspaceRefusal {
  const what = JSON.stringify(name || '.');
  const found: Record<string, string> = {
    ENOENT: 'is gone or a link to nothing',
    ENOTDIR: 'is no longer a folder',
    ELOOP: 'is a symbolic link',
    EISDIR: 'is a folder, not a file',
    EEXIST: 'is taken by something else',
  };
  const why = (err.code !== undefined ? found[err.code] : undefined) ?? `cannot be used (${err.code ?? err.message})`;
  return new WorkspaceRefusal(`${quoted}: ${what} ${why}: it was changed while it was written, and nothing was written`);
}

/** Where a write starts: the workspace's real path, and its pinned folder when it is pinned (`pinWorkspace`). */
interface WorkspaceRoot {
  real: string;
  pin?: PinnedWorkspace;
}

/** `workspace`'s root: the real path it was pinned at, or its real path now. */
async function workspaceRoot(workspace: string, quoted: string): Promise<WorkspaceRoot> {
  const pin = pinnedWorkspace(workspace);
  if (pin) return { real: pin.real, pin };
  const real = await realpath(workspace).catch((err: NodeJS.ErrnoException) => {
    throw changedWhileWritten(quoted, '', err);
  });
  return { real };
}

/**
 * The folder `dir` (inside the workspace's real path `root`), opened one folder at a time from
 * the root's descriptor, each `O_DIRECTORY | O_NOFOLLOW` through `/proc/self/fd/<parent>/<name>`:
 * a folder on the way swapped for a link (to a folder outside) after `resolveInWorkspace` looked
 * is refused, not followed. `O_NOFOLLOW` on the whole path guards only its last part. The root is
 * opened by its path and must still be that path once opened.
 */
async function openFolderInside(start: WorkspaceRoot, dir: string, quoted: string): Promise<FileHandle>;
/** With `ifMissing: 'none'`: undefined when a folder on the way is not there (or not a folder) yet, a link still refused. */
async function openFolderInside(start: WorkspaceRoot, dir: string, quoted: string, ifMissing: 'none'): Promise<FileHandle | undefined>;
async function openFolderInside(start: WorkspaceRoot, dir: string, quoted: string, ifMissing: 'refuse' | 'none' = 'refuse'): Promise<FileHandle | undefined> {
  const root = start.real;
  const rel = relative(root, dir);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new WorkspaceRefusal(`${quoted} leads out of the workspace`);
  // Pinned, the walk starts from the folder held open, wherever its name now leads.
  let folder = await open(start.pin ? `${PROC_FD}/${start.pin.fd}` : root, constants.O_RDONLY | constants.O_DIRECTORY).catch((err: NodeJS.ErrnoException) => {
    throw changedWhileWritten(quoted, '', err);
  });
  try {
    if (start.pin) {
      const { dev, ino } = await folder.stat();
      if (dev !== start.pin.dev || ino !== start.pin.ino) throw new WorkspaceRefusal(`${quoted}: the workspace was let go of while it was written: nothing was written`);
    } else if ((await readlink(`${PROC_FD}/${folder.fd}`)) !== root) throw new WorkspaceRefusal(`${quoted}: the workspace was moved while it was written: nothing was written`);
    let walked = '';
    for (const segment of rel === '' ? [] : rel.split(sep)) {
      walked = join(walked, segment);
      const next = await open(`${PROC_FD}/${folder.fd}/${segment}`, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW).catch(async (err: NodeJS.ErrnoException) => {
        // Not there yet (or a file, not a folder; ENOTDIR is also what O_NOFOLLOW gives some links, so look).
        if (ifMissing === 'none' && (err.code === 'ENOENT' || err.code === 'ENOTDIR') && !(await isLink(`${PROC_FD}/${folder.fd}/${segment}`))) return undefined;
        if (err.code === 'ELOOP' || err.code === 'ENOTDIR' || err.code === 'ENOENT') throw new WorkspaceRefusal(`${quoted}: a folder on its way, ${JSON.stringify(walked)}, was replaced (by a link or otherwise) while it was written: nothing was written`);
        throw changedWhileWritten(quoted, walked, err);
      });
      await folder.close();
      if (next === undefined) return undefined;
      folder = next;
    }
    return folder;
  } catch (err) {
    await folder.close();
    throw err;
  }
}

/**
 * Makes the folder `segment` in `dir` (a real path inside the workspace's real path `root`); one
 * already there is not an error. On Linux it is made through `dir`'s descriptor
 * (`openFolderInside`, then `mkdir /proc/self/fd/<dir>/<segment>`): made by path, a folder on the
 * way swapped for a link to a folder outside between the check and the `mkdir` had the folder made
 * there (`resolveInWorkspace` then refused the write, but the empty folder stayed outside).
 */
async function makeFolderIn(start: WorkspaceRoot, dir: string, segment: string, quoted: string): Promise<void> {
  const root = start.real;
  const folder = hasProcFd() ? await openFolderInside(start, dir, quoted) : undefined;
  try {
    await mkdir(folder ? `${PROC_FD}/${folder.fd}/${segment}` : join(dir, segment)).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EEXIST') return;
      if (isNotAllowed(err)) throw notWritable(quoted, relative(root, dir), 'folder', err);
      throw changedWhileWritten(quoted, relative(root, join(dir, segment)), err);
    });
  } finally {
    await folder?.close();
  }
}

/**
 * Replaces the content of `file` (a path `resolveInWorkspace` returned for `workspace`; `path` as
 * the person approved it, for the refusal) with `content`, whole or not at all (`writeReplacing`: a
 * file of its own beside it, renamed over it once whole), judging the old file by what is opened,
 * not by its path: only a regular file with one name, still the one the path names, is replaced, and
 * nothing is ever written through a name (a hard link to a file outside swapped in after the check
 * is the name that goes). On Linux the file's folder is reached by descriptors, never through a link
 * (`openFolderInside`); a parent folder swapped for a link to a folder outside had the write land
 * there. Where `/proc/self/fd` is absent (macOS) the folders are judged by path only
 * (`docs/agents.md`, known limits). With `against` (the file the approved diff stat was counted
 * against, `readInWorkspace`'s `seen`), only that file is replaced, or a new one made where there was
 * none; anything else there now is a refusal, nothing written.
 */
export async function replaceFileContent(workspace: string, file: string, path: string, content: string, against?: OldFileSeen): Promise<void> {
  const quoted = JSON.stringify(path);
  const start = await workspaceRoot(workspace, quoted);
  const root = start.real;
  const folder = hasProcFd() ? await openFolderInside(start, dirname(file), quoted) : undefined;
  try {
    // Through the folder's descriptor on Linux: `<fd>/<name>` is looked up in that folder itself.
    const inFolder = (name: string): string => (folder ? `${PROC_FD}/${folder.fd}/${name}` : join(dirname(file), name));
    await writeReplacing(inFolder, basename(file), quoted, relative(root, file), content, against);
  } finally {
    // What writers killed mid-write left in this folder goes now, whatever came of this write.
    if (folder) await removeAbandonedTemporaries(`${PROC_FD}/${folder.fd}`);
    await folder?.close();
  }
}

/** What `readInWorkspace` read, and the file it read as seen (`OldFileSeen`; undefined where it cannot say: no `/proc/self/fd`). */
export interface OldFileRead {
  read: RegularFileRead;
  seen: OldFileSeen | undefined;
}

const MISSING: RegularFileRead = { ok: false, why: 'missing', message: 'it does not exist' };

/**
 * Reads `file` (a path `resolveInWorkspace` returned for `workspace`) as `readRegularFile` does
 * (bounded, without blocking, not through a last link), its folder reached the way
 * `replaceFileContent` reaches it: by descriptors from the pinned workspace, never through a link.
 * By path, the diff stat a person is shown for a write was read through a workspace (or a folder of
 * it) exchanged with a link to a folder outside: another file's stat. A folder on the way that is not
 * there yet is a missing file (the write makes it); one replaced by a link is a refusal. The file is
 * opened once and read through that descriptor, so what is seen (its `fstat`) is the file read.
 */
export async function readInWorkspace(workspace: string, file: string, path: string, limits: RegularFileLimits): Promise<OldFileRead> {
  const quoted = JSON.stringify(path);
  if (!hasProcFd()) return { read: await readRegularFile(file, limits), seen: undefined };
  const start = await workspaceRoot(workspace, quoted);
  const folder = await openFolderInside(start, dirname(file), quoted, 'none');
  if (folder === undefined) return { read: MISSING, seen: null };
  try {
    const at = `${PROC_FD}/${folder.fd}/${basename(file)}`;
    const handle = await open(at, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => undefined);
    if (handle === undefined) {
      // Not opened: the reader says why (none there, a link, not readable); a file it finds after all was put there meanwhile.
      const read = await readRegularFile(at, limits);
      if (read.ok) return { read: { ok: false, why: 'unreadable', message: 'it was changed while it was read' }, seen: undefined };
      return { read, seen: read.why === 'missing' || /ENOTDIR/.test(read.message) ? null : undefined };
    }
    try {
      const stat = await handle.stat({ bigint: true });
      // Read through this descriptor (its /proc/self/fd link names this very file).
      const read = await readRegularFile(`${PROC_FD}/${handle.fd}`, { ...limits, noFollow: false });
      return { read, seen: read.ok || read.why === 'too-large' ? seenOf(stat) : undefined };
    } finally {
      await handle.close();
    }
  } finally {
    await folder.close();
  }
}

/**
 * Judges the file at `at` (its folder's descriptor path and name) before it is replaced: none there is
 * a new file (undefined); else it must be a regular file with one name, the one `at` names, not a
 * link (`O_NOFOLLOW`), opened without blocking (`O_NONBLOCK`: a fifo is not waited on). Returns what
 * the new content keeps of it: its owner, its group and its permission bits (`rwx` for each, no
 * set-id or sticky bit). With `against`, it must be that file as it was seen, or none if none was.
 */
async function judgeOldFile(at: string, quoted: string, name: string, against: OldFileSeen | undefined): Promise<KeptFromOldFile | undefined> {
  const handle = await open(at, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    if (err.code === 'ELOOP') throw new WorkspaceRefusal(`${quoted} is a symlink: the agent writes only regular files in its workspace`);
    if (err.code === 'ENXIO') throw new WorkspaceRefusal(`${quoted} is not a regular file`);
    throw changedWhileWritten(quoted, name, err);
  });
  if (handle === undefined) {
    if (against) throw changedSinceAsked(quoted);
    return undefined;
  }
  try {
    const stat = await handle.stat({ bigint: true });
    if (stat.isDirectory()) throw changedWhileWritten(quoted, name, Object.assign(new Error('a folder'), { code: 'EISDIR' }));
    if (!stat.isFile()) throw new WorkspaceRefusal(`${quoted} is not a regular file`);
    // That name the path, and one name: a file with another name (perhaps outside) was refused
    // before the person was asked, and is still: the person approved replacing this one file.
    const named = await lstat(at, { bigint: true }).catch(() => undefined);
    if (named === undefined || named.ino !== stat.ino || named.dev !== stat.dev) throw new WorkspaceRefusal(`${quoted} was replaced while it was opened: nothing was written`);
    const nlink = Number(stat.nlink > named.nlink ? stat.nlink : named.nlink);
    if (nlink > 1) throw new WorkspaceRefusal(`${quoted} has ${nlink} names (hard links): writing it would change the file under its other names too`);
    if (against !== undefined && !isAsSeen(against, stat)) throw changedSinceAsked(quoted);
    // The file's own permissions decide, as when it was written in place: replacing it asks only its folder's.
    await mayWrite(hasProcFd() ? `${PROC_FD}/${handle.fd}` : at, quoted, name, 'file');
    // Its permissions, never a set-id bit on a file the worker makes; its owner and group.
    return { mode: Number(stat.mode & 0o777n), uid: Number(stat.uid), gid: Number(stat.gid) };
  } finally {
    await handle.close();
  }
}

/** What a replaced file's new content keeps of the old file: whose it is, and who may do what with it. */
interface KeptFromOldFile {
  mode: number;
  uid: number;
  gid: number;
}

/**
 * Replaces the file `base` in the folder `inFolder` names (its descriptor's path on Linux) with
 * `content`, whole or not at all: the old file judged (`judgeOldFile`), the content written to a
 * file of its own beside it (created `O_EXCL | O_NOFOLLOW`, owner-only until it is given the old
 * file's owner, group and mode), synced, and renamed over `base` within that same folder. Truncated and written in place, a write that failed
 * part way (the disk full, the file size limit: EFBIG) left the old content lost and part of the new.
 * Whatever fails, the file beside it is removed, and so it is when the process exits before the
 * rename (`makingTemporary`). A file put at `base` meanwhile is replaced, never
 * written through: a link there is the name that goes, not the file it names. With `against`, the
 * name is looked at again once the content is written (`isAsSeen`), and a new file takes its name by
 * `link` (`linkAsNew`): a file put there while the content was written is not replaced.
 */
async function writeReplacing(inFolder: (name: string) => string, base: string, quoted: string, name: string, content: string, against: OldFileSeen | undefined): Promise<void> {
  const old = await judgeOldFile(inFolder(base), quoted, name, against);
  const temporary = inFolder(temporaryName(base));
  // Made and recorded in one synchronous step (`makingTemporary`: removed if the worker exits before
  // it is renamed). Opened asynchronously, a SIGTERM handled between the open and the record (the
  // worker exits at once) left the file unrecorded, in the workspace for good.
  let fd: number;
  let done = (): void => {};
  try {
    // Owner-only until it has the old file's owner, group and bits (keepOwnerAndMode): made with the
    // old bits, it was open to the writer's group (or a setgid folder's) until its group was set, and a
    // member that opened it then read the content approved for the old file's group.
    fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, old === undefined ? 0o644 : 0o600);
  } catch (err) {
    const failed = err as NodeJS.ErrnoException;
    // ENOENT: its folder was removed after it was opened; EACCES: a folder this user may not write.
    if (isNotAllowed(failed)) throw notWritable(quoted, dirname(name) === '.' ? '' : dirname(name), 'folder', failed);
    throw changedWhileWritten(quoted, failed.code === 'ENOENT' ? dirname(name) : name, failed);
  }
  let renamed = false;
  try {
    try {
      const made = fstatSync(fd, { bigint: true });
      done = makingTemporary(temporary, made);
      if (old !== undefined) await keepOwnerAndMode(fd, made, old, quoted);
      await promisify(writeFile)(fd, content, 'utf8');
      await promisify(fdatasync)(fd); // whole on disk before it takes the name
    } catch (err) {
      if (err instanceof WorkspaceRefusal) throw err;
      throw new WorkspaceRefusal(`${quoted} could not be written (${err instanceof Error ? err.message : String(err)}): the file is as it was`);
    } finally {
      await promisify(close)(fd);
    }
    // Writing and syncing the content took a while: the file approved (against) is looked for again,
    // last thing before it is replaced. Judged only before, a file another worker of a shared folder
    // put there meanwhile was replaced, its content lost to a write approved against another file.
    if (against === null) {
      renamed = await linkAsNew(temporary, inFolder(base), quoted, name);
      if (renamed) return;
    } else if (against !== undefined && !isAsSeen(against, await lstat(inFolder(base), { bigint: true }).catch(() => undefined))) {
      throw changedSinceAsked(quoted);
    }
    // Left: the time between that look and the rename (two system calls). No call of Node's replaces
    // only a given file or exchanges two (renameat2); docs/agents.md says why what it has does not close it.
    await rename(temporary, inFolder(base)).catch((err: NodeJS.ErrnoException) => {
      // EISDIR: a folder put at the file's name; ENOENT: the folder removed.
      throw changedWhileWritten(quoted, err.code === 'ENOENT' ? dirname(name) : name, err);
    });
    renamed = true;
  } finally {
    if (!renamed) await unlink(temporary).catch(() => {});
    done();
  }
}

/**
 * Gives the written file `temporary` the name `at` only if nothing has it (a write approved as a new
 * file, `against` null): a second name made by `link`, which fails on a name taken (never replaces
 * it, unlike `rename`), then its hidden name removed. True once done; false where the file system has
 * no hard links (the caller renames then). A writer killed between the two leaves the file with its
 * hidden second name: the next sweep of its folder removes that name (`removeAbandonedTemporaries`;
 * for a name over 100 bytes, the sweep of a write that looks at that file).
 */
async function linkAsNew(temporary: string, at: string, quoted: string, name: string): Promise<boolean> {
  const linked = await link(temporary, at).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'EEXIST') throw changedSinceAsked(quoted);
      if (err.code === 'EPERM' || err.code === 'ENOTSUP' || err.code === 'EOPNOTSUPP' || err.code === 'EMLINK') return false;
      throw changedWhileWritten(quoted, err.code === 'ENOENT' ? dirname(name) : name, err);
    },
  );
  if (!linked) {
    // Renamed instead: a file made since the judge is still refused, but for the time between this look and the rename.
    if ((await lstat(at).catch(() => undefined)) !== undefined) throw changedSinceAsked(quoted);
    return false;
  }
  await unlink(temporary).catch(() => {});
  return true;
}

/**
 * Gives the new file (`fd`, made by this process, owner-only; `made`, its `fstat`) the old file's owner, group and permission
 * bits, in that order (a change of owner clears set-id bits; the bits last, so the file opens to the
 * old file's group only once it is that group's), before any content is written. A new inode is the writer's: a gateway running as root made a file of the
 * person's root's (they could no longer edit it), and a file whose group was kept narrow got the
 * writer's group with the same group bits. Where the owner or group cannot be kept (`EPERM`: another
 * user's file, a group the user is not in) the write is refused: the file never changes hands.
 */
async function keepOwnerAndMode(fd: number, made: BigIntStats, old: KeptFromOldFile, quoted: string): Promise<void> {
  if (Number(made.uid) !== old.uid || Number(made.gid) !== old.gid) {
    await promisify(fchown)(fd, old.uid, old.gid).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPERM') throw err;
      throw ownerNotKept(quoted, old);
    });
  }
  await promisify(fchmod)(fd, old.mode);
}
