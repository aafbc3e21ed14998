import { lstatSync, opendirSync, watch, type FSWatcher } from 'node:fs';
import { basename, join, relative } from 'node:path';

/** Folders watched at most (each is one inotify watch; Linux's default budget is 8,192 per user on older kernels). */
export const MAX_WATCHED_FOLDERS = 4096;
/** How deep below the modules directory a folder is watched: a plugin's `src/lib/util/x.js` is 4. */
const MAX_DEPTH = 6;
/** The longest the watch works on new folders before the event loop gets a turn. */
const SLICE_MS = 5;

export interface TreeWatchEvents {
  /** Something happened at `path` (relative to the root; its first segment is the plugin folder), or somewhere unknown (`null`). */
  heard(path: string | null): void;
  /** The root's own watch failed: the watch cannot go on. */
  failed(err: Error): void;
  /** When a folder is left unwatched for the budget (`MAX_WATCHED_FOLDERS`): once, and again after room freed and it filled up again. */
  full(): void;
}

/**
 * A recursive watch of the modules directory built from one plain `fs.watch` per folder. Not
 * `fs.watch(root, { recursive: true })`: on Linux, Node 20 implements that in JavaScript on the
 * main thread and re-walks what it watches as folders appear, so 2,000 folders dropped at once
 * froze the event loop 14 s (4,000: over a minute). Here a new folder costs one `lstat`, one
 * watch and one bounded read of its entries. Dot folders and `node_modules` are not watched (no
 * plugin source lies there), nor folders past `MAX_DEPTH` or the `MAX_WATCHED_FOLDERS` budget;
 * symbolic links are never followed.
 *
 * Each watch remembers the folder it is on (its device, inode and birth time): a path that now
 * holds another folder (a deploy by swap, `rm -rf build && mkdir build` heard in one batch) is
 * watched anew, and a folder dropped takes every watch below it along. Folders left unwatched
 * while the budget was full are remembered and watched once room frees.
 */
export class TreeWatch {
  private readonly watchers = new Map<string, { watcher: FSWatcher; folder: string }>();
  private closed = false;
  private saidFull = false;
  /** Left unwatched for the budget (a folder, or a folder whose remaining entries were not read), at most `MAX_WATCHED_FOLDERS`. */
  private readonly skipped = new Map<string, Pending>();

  constructor(
    private readonly root: string,
    private readonly events: TreeWatchEvents,
  ) {
    const top = watch(root, (_event, filename) => this.heardIn(root, 0, filename));
    top.on('error', (err) => this.events.failed(err));
    this.watchers.set(root, { watcher: top, folder: folderIdentity(root) ?? '' });
    this.addChildren(root, 0);
  }

  close(): void {
    this.closed = true;
    for (const { watcher } of this.watchers.values()) watcher.close();
    this.watchers.clear();
    this.skipped.clear();
  }

  /** How many folders are watched now (the root included). */
  get size(): number {
    return this.watchers.size;
  }

  private heardIn(dir: string, depth: number, filename: string | Buffer | null): void {
    if (this.closed) return;
    if (filename === null) {
      this.events.heard(dir === this.root ? null : relative(this.root, dir));
      return;
    }
    const path = join(dir, filename.toString());
    this.events.heard(relative(this.root, path));
    // A folder that appeared is watched in turn; one that went away takes its watch with it. In
    // slices of a few milliseconds: thousands of folders dropped at once must not hold the loop.
    this.queue({ path, depth: depth + 1 });
    // A watch's event about its own folder (moved or deleted) names the folder: it is looked at too.
    if (dir !== this.root && filename.toString() === basename(dir)) this.queue({ path: dir, depth });
  }

  private queue(pending: Pending): void {
    this.toAdd.push(pending);
    if (this.toAdd.length === 1) setImmediate(this.addSome);
  }

  private readonly toAdd: Pending[] = [];
  private readonly addSome = (): void => {
    const until = performance.now() + SLICE_MS;
    let done = 0;
    while (done < this.toAdd.length && !this.closed && performance.now() < until) {
      const { path, depth, children } = this.toAdd[done++]!;
      if (children) {
        if (this.watchers.has(path)) this.addChildren(path, depth);
      } else this.add(path, depth);
    }
    this.toAdd.splice(0, done);
    if (this.toAdd.length > 0 && !this.closed) setImmediate(this.addSome);
  };

  private add(dir: string, depth: number): void {
    const folder = folderIdentity(dir);
    const had = this.watchers.get(dir);
    if (had) {
      if (folder === had.folder) return;
      this.drop(dir); // gone, or another folder now: its watch (and those below) are on what left
    }
    if (depth > MAX_DEPTH || folder === undefined) return;
    const name = dir.slice(dir.lastIndexOf('/') + 1);
    if (depth > 1 && (name.startsWith('.') || name === 'node_modules')) return;
    if (this.watchers.size >= MAX_WATCHED_FOLDERS) return this.tooMany({ path: dir, depth });
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, (_event, filename) => this.heardIn(dir, depth, filename));
    } catch {
      return this.tooMany({ path: dir, depth }); // ENOSPC: the system's watches are spent
    }
    watcher.on('error', () => this.drop(dir));
    this.watchers.set(dir, { watcher, folder });
    this.skipped.delete(dir);
    this.addChildren(dir, depth);
  }

  /** The folders in `dir`, read one entry at a time and only as far as the budget lets them be watched. */
  private addChildren(dir: string, depth: number): void {
    if (depth + 1 > MAX_DEPTH) return;
    let folder;
    try {
      folder = opendirSync(dir);
    } catch {
      return;
    }
    try {
      for (let entry = folder.readSync(); entry !== null && !this.closed; entry = folder.readSync()) {
        if (!entry.isDirectory()) continue;
        if (this.watchers.size >= MAX_WATCHED_FOLDERS) return this.tooMany({ path: dir, depth, children: true });
        this.add(join(dir, entry.name), depth + 1);
      }
    } catch {
      // a folder that went away while read: what was read stands
    } finally {
      folder.closeSync();
    }
  }

  /** Stops watching `dir` and every folder below it; room freed goes to the folders skipped for the budget. */
  private drop(dir: string): void {
    const below = `${dir}/`;
    for (const [path, { watcher }] of this.watchers) {
      if (path !== dir && !path.startsWith(below)) continue;
      watcher.close();
      this.watchers.delete(path);
    }
    if (this.skipped.size === 0 || this.closed || this.watchers.size >= MAX_WATCHED_FOLDERS) return;
    const again = [...this.skipped.values()];
    this.skipped.clear();
    this.saidFull = false; // filled again later, it is said again
    for (const pending of again) this.queue(pending);
  }

  private tooMany(left: Pending): void {
    if (this.skipped.size < MAX_WATCHED_FOLDERS) this.skipped.set(left.children ? `${left.path}/` : left.path, left);
    if (this.saidFull) return;
    this.saidFull = true;
    this.events.full();
  }
}

/** A folder to watch (`children`: only its entries not read yet). */
interface Pending {
  path: string;
  depth: number;
  children?: boolean;
}

/** Which folder `path` is (device, inode, birth time: an inode reused by a new folder is another one), or undefined when it is no real folder. */
function folderIdentity(path: string): string | undefined {
  try {
    const s = lstatSync(path, { bigint: true });
    return s.isDirectory() ? `${s.dev}:${s.ino}:${s.birthtimeNs}` : undefined;
  } catch {
    return undefined;
  }
}
