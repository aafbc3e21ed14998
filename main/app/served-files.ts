// What the `app:` scheme serves, read into memory once, when the handler is made: the app's pages
// folder and this package's allow-listed renderer files. Never read again from the disk: a file
// someone later writes (through a hard link made in the agents' workspace and removed again, a
// descriptor held open, a link inside the package re-pointed) changes nothing that is served.
// Counting a file's names (st_nlink) at each request could not see a write through a name already
// gone, and refused every file an installer deduplicates by hard links (pnpm, Nix, ostree).
// The cost: a page changed on the disk is served after the app restarts.
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isInside } from '../broker/spawn-context.js';
import { readRegularFileSync } from '../owner-only/regular-file.js';

/** The largest file served on `app:`: a page, a script, an image; anything bigger is refused (404, logged with why). */
export const MAX_APP_FILE_BYTES = 16 * 1024 * 1024;
/** All the files one handler holds together (the pages folder and the package's), at most. */
export const MAX_SERVED_BYTES = 128 * 1024 * 1024;
/** Names looked at in one served folder, at most (a folder of a million names is refused at start). */
export const MAX_SERVED_NAMES = 10_000;

export interface ServedFile {
  readonly bytes: Buffer;
  readonly contentType: string;
}

/** The files served, by URL path (`/index.html`, `/out/renderer/index.js`), and why each name left out was. */
export interface ServedFiles {
  readonly files: Map<string, ServedFile>;
  /** A name the folder's pattern admits that was not read: a link, a fifo, too large… (for the 404's log line). */
  readonly refused: Map<string, string>;
}

/** One folder to read: its real path, the URL path its files are served under, and which names (the extension is group 1). */
export interface ServedFolder {
  readonly real: string;
  readonly urlPrefix: string;
  readonly names: RegExp;
}

export function emptyServedFiles(): ServedFiles {
  return { files: new Map(), refused: new Map() };
}

/**
 * Reads each file `folder.names` admits directly in `folder.real` into `into`: a regular file of
 * at most MAX_APP_FILE_BYTES, its own name not a link (owner-only/regular-file.ts). Throws when the
 * folder has over MAX_SERVED_NAMES names or the files together pass MAX_SERVED_BYTES: an app whose
 * page cannot be served whole is told at start, not by a blank window.
 */
export function readServedFolder(folder: ServedFolder, contentTypes: Readonly<Record<string, string>>, into: ServedFiles): void {
  const names = readdirSync(folder.real);
  if (names.length > MAX_SERVED_NAMES) throw new Error(`app protocol: ${folder.real} has over ${MAX_SERVED_NAMES} names; serve a folder of the pages alone`);
  let held = 0;
  for (const file of into.files.values()) held += file.bytes.length;
  for (const name of names.sort()) {
    const match = folder.names.exec(name);
    const contentType = match ? contentTypes[match[1] ?? ''] : undefined;
    if (contentType === undefined) continue;
    const urlPath = `${folder.urlPrefix}/${name}`;
    const read = readRegularFileSync(join(folder.real, name), { maxBytes: MAX_APP_FILE_BYTES });
    if (!read.ok) {
      into.refused.set(urlPath, read.message);
      continue;
    }
    held += read.bytes.length;
    if (held > MAX_SERVED_BYTES) throw new Error(`app protocol: the files to serve pass ${MAX_SERVED_BYTES} bytes at ${join(folder.real, name)}; serve a smaller pages folder`);
    into.files.set(urlPath, { bytes: read.bytes, contentType });
  }
}

/**
 * The real path of `relative` under `root` (a real path), or undefined when it is not there.
 * Throws when it leads out of `root`: a link inside the package (out/ kept on another disk) is
 * followed once, here, and must stay in the folder the workspace is kept apart from.
 */
export function realFolderInside(root: string, relative: string): string | undefined {
  let real: string;
  try {
    real = realpathSync(join(root, relative));
  } catch {
    return undefined;
  }
  if (!isInside(real, root)) throw new Error(`app protocol: this package's ${relative} leads out of its folder ${root} (to ${real}); its served files must lie in it`);
  return statSync(real).isDirectory() ? real : undefined;
}
