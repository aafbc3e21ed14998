import { lstatSync, opendirSync, watch, type FSWatcher } from 'node:fs';
import { join, relative } from 'node:path';

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
  /** Once, when a folder is left unwatched for the budget (`MAX_WATCHED_FOLDERS`). */
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
 */
export class TreeWatch {
  private readonly watchers = new Map<string, FSWatcher>();
  private closed = false;
  private saidFull = false;

  constructor(
    private readonly root: string,
    private readonly events: TreeWatchEvents,
  ) {
    const top = watch(root, (_event, filename) => this.heardIn(root, 0, filename));
    top.on('error', (err) => this.events.failed(err));
    this.watchers.set(root, top);
    this.addChildren(root, 0);
  }

  close(): void {
    this.closed = true;
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
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
    this.toAdd.push({ path, depth: depth + 1 });
    if (this.toAdd.length === 1) setImmediate(this.addSome);
  }

  private readonly toAdd: { path: string; depth: number }[] = [];
  private readonly addSome = (): void => {
    const until = performance.now() + SLICE_MS;
    let done = 0;
    while (done < this.toAdd.length && !this.closed && performance.now() < until) {
      const { path, depth } = this.toAdd[done++]!;
      this.add(path, depth);
    }
    this.toAdd.splice(0, done);
    if (this.toAdd.length > 0 && !this.closed) setImmediate(this.addSome);
  };

  private add(dir: string, depth: number): void {
    if (this.watchers.has(dir)) {
      if (!isRealFolder(dir)) this.drop(dir);
      return;
    }
    if (depth > MAX_DEPTH || !isRealFolder(dir)) return;
    const name = dir.slice(dir.lastIndexOf('/') + 1);
    if (depth > 1 && (name.startsWith('.') || name === 'node_modules')) return;
    if (this.watchers.size >= MAX_WATCHED_FOLDERS) return this.tooMany();
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, (_event, filename) => this.heardIn(dir, depth, filename));
    } catch {
      return this.tooMany(); // ENOSPC: the system's watches are spent
    }
    watcher.on('error', () => this.drop(dir));
    this.watchers.set(dir, watcher);
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
        if (this.watchers.size >= MAX_WATCHED_FOLDERS) return this.tooMany();
        this.add(join(dir, entry.name), depth + 1);
      }
    } catch {
      // a folder that went away while read: what was read stands
    } finally {
      folder.closeSync();
    }
  }

  private drop(dir: string): void {
    this.watchers.get(dir)?.close();
    this.watchers.delete(dir);
  }

  private tooMany(): void {
    if (this.saidFull) return;
    this.saidFull = true;
    this.events.full();
  }
}

function isRealFolder(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}
