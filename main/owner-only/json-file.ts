import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fstatSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync, type BigIntStats, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import type { z } from 'zod';
import { whyOpenToOthers } from './closed-to-others.js';
import { walkPath } from './path-walk.js';
import { readRegularFileSync } from './regular-file.js';
import { withWriteLock } from './write-lock.js';

/**
 * The largest owner-only JSON file read (the rules and grants files are kilobytes): a bigger one is
 * refused by its size, never read (an 8 GiB sparse file was read whole on the main thread).
 */
export const MAX_JSON_FILE_BYTES = 16 * 1024 * 1024;

/** How an owner-only JSON file names itself and its contents in a refusal. */
export interface OwnerOnlyJsonFileOptions<T> {
  /** `approvals file`, `grants file`: the file's name in every message. */
  label: string;
  /** What it holds, in "someone else could have written its rules". */
  contents: string;
  /** What it should be, in "… is not a rules file at rules.0.effect". */
  kind: string;
  schema: z.ZodType<T>;
  /** A check the schema cannot make (ids given twice): the problem ("has the rule id "x" twice"), or undefined. */
  check?: (data: T) => string | undefined;
  /** The error thrown for a file that cannot be read as one (its class names the file's kind). */
  refuse: (message: string) => Error;
}

/** A `check` for a list whose values must differ: `has the rule id "x" twice` for the first repeated one. */
export function repeatedValue(values: readonly string[], what: string): string | undefined {
  const seen = new Set<string>();
  for (const value of values) {
    if (seen.has(value)) return `has the ${what} ${JSON.stringify(value)} twice`;
    seen.add(value);
  }
  return undefined;
}

/**
 * A JSON file only its owner may write (0600), validated on every read and written atomically (a
 * temporary file in the same directory, synced, then renamed over it). A file that cannot be read
 * as one is refused, naming it, and left as it is: nothing is ever written over it. Read again
 * only when another process has changed it. The approval rules and the plugin grants both live in
 * one of these.
 */
export class OwnerOnlyJsonFile<T> {
  private cached: T | undefined;
  private cachedStamp: string | undefined = 'unread';

  constructor(
    readonly path: string,
    private readonly options: OwnerOnlyJsonFileOptions<T>,
  ) {}

  /**
   * The file's contents (undefined when it does not exist); throws `refuse(…)` naming the file when
   * it is malformed. The file is opened once: whose it is, its mode and the stamp it is cached
   * under are all taken from that descriptor (`fstat`), and its bytes read through it, so a file
   * renamed over the path meanwhile is never read under another's judgement or stamp.
   */
  read(): T | undefined {
    const { label, refuse } = this.options;
    const now = this.stamp();
    if (now === this.cachedStamp) return this.cached;
    if (now === undefined) return this.remember(undefined, undefined);
    const opened = this.readOpened();
    if (opened === undefined) return this.remember(undefined, undefined);
    let json: unknown;
    try {
      json = JSON.parse(opened.text);
    } catch (err) {
      throw refuse(`${label} ${this.path} is not valid JSON (${(err as Error).message}); it was left as it is`);
    }
    const parsed = this.validated(json);
    if (!parsed.ok) throw refuse(`${label} ${this.path} ${parsed.problem}; it was left as it is`);
    return this.remember(parsed.data, opened.stamp);
  }

  private remember(data: T | undefined, stamp: string | undefined): T | undefined {
    this.cached = data;
    this.cachedStamp = stamp;
    return data;
  }

  /**
   * Reads the file, applies `change` (pure: it may be called again) and writes the result (refused,
   * the file untouched, when it cannot be read). Writers of this class take turns on a lock file
   * (`withWriteLock`), so what one adds is never written over by another; a person's editor writing
   * it meanwhile is seen (the file changed since it was read), and the update starts again from
   * what it wrote, so that what it removed is not written back. Refused, writing nothing, when the
   * file keeps changing.
   */
  update(change: (current: T | undefined) => T): T {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    return withWriteLock(this.path, this.options.refuse, () => this.updateLocked(change));
  }

  private updateLocked(change: (current: T | undefined) => T): T {
    for (let attempt = 1; ; attempt++) {
      const read = this.read();
      const readStamp = this.cachedStamp;
      const next = change(read);
      this.refuseToWrite(next);
      const temp = `${this.path}.${randomBytes(6).toString('hex')}.tmp`;
      const fd = openSync(temp, 'wx', 0o600);
      try {
        writeSync(fd, `${JSON.stringify(next, null, 2)}\n`);
        fsyncSync(fd);
        fchmodSync(fd, 0o600); // the umask may have narrowed it further; never widened
        if (this.stamp() !== readStamp) {
          rmSync(temp, { force: true });
          if (attempt < 5) continue;
          throw this.options.refuse(`${this.options.label} ${this.path} kept changing while it was being written; nothing was written over it, try again`);
        }
        renameSync(temp, this.path);
        // Stamped from the descriptor written (the rename changed its ctime), not by path: a file
        // renamed over the path just after ours would otherwise be cached as what we wrote.
        this.remember(next, stampOf(fstatSync(fd, { bigint: true })));
        return next;
      } catch (err) {
        rmSync(temp, { force: true });
        throw err;
      } finally {
        closeSync(fd);
      }
    }
  }

  /** What would not be read back (a detail over its length limit) is never written: refused, naming the file, which is left as it is. */
  private refuseToWrite(next: T): void {
    const parsed = this.validated(next);
    if (!parsed.ok) throw this.options.refuse(`${this.options.label} ${this.path}: the change ${parsed.problem}; nothing was written`);
  }

  /** `data` checked as the file's contents, or what is wrong with it ("is not a rules file at rules.0.effect: …"). */
  private validated(data: unknown): { ok: true; data: T } | { ok: false; problem: string } {
    const { kind, schema, check } = this.options;
    const parsed = schema.safeParse(data);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      const where = first?.path.length ? ` at ${first.path.join('.')}` : '';
      return { ok: false, problem: `is not ${kind}${where}: ${first?.message ?? 'invalid'}` };
    }
    const problem = check?.(parsed.data);
    return problem !== undefined ? { ok: false, problem } : { ok: true, data: parsed.data };
  }

  /**
   * The file's text and the stamp of the version read (undefined when it is gone), opened once
   * without blocking and refused unless it is a regular file of at most `MAX_JSON_FILE_BYTES`
   * (`readRegularFileSync`): a fifo planted at the path held the read, and the main thread with
   * it, until someone wrote to it; a sparse file of gigabytes was read whole. A link at the path is
   * followed (its folders are checked by `checkOwnerOnly`). A file replaced while it was judged is
   * opened again (an editor's atomic save), up to 5 times.
   */
  private readOpened(): { text: string; stamp: string } | undefined {
    const { label, refuse } = this.options;
    for (let attempt = 1; ; attempt++) {
      let stamp: string | undefined;
      const read = readRegularFileSync(this.path, { maxBytes: MAX_JSON_FILE_BYTES, noFollow: false }, (fd) => {
        if (this.checkOwnerOnly(fd)) stamp = stampOf(fstatSync(fd, { bigint: true })); // after a chmod 600 of a readable file
      });
      if (read.ok && stamp !== undefined) return { text: read.bytes.toString('utf8'), stamp };
      if (read.ok) {
        if (attempt < 5) continue;
        throw refuse(`${label} ${this.path} kept being replaced while it was read; it was left as it is, try again`);
      }
      if (read.why === 'missing') return undefined;
      if (read.why === 'not-regular' || read.why === 'too-large') throw refuse(`${label} ${this.path} ${read.message.replace(/^it /, '')}; it was left as it is`);
      throw refuse(`${label} ${this.path}: ${read.message}`);
    }
  }

  /** The stamp (`stampOf`) of what the path names now, undefined when nothing. */
  private stamp(): string | undefined {
    try {
      return stampOf(statSync(this.path, { bigint: true }));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw this.options.refuse(`${this.options.label} ${this.path}: ${(err as Error).message}`);
    }
  }

  /**
   * Judges the opened file `fd`: refuses one someone else could have written into: owned by another
   * user, or that its group or others may write (or in a directory they may write, without the
   * sticky bit, where they could rename another file over it). One others may only read is made
   * owner-only. False when the path no longer leads to `fd`'s file (replaced since it was opened:
   * the folders judged are not that file's): open it again.
   */
  private checkOwnerOnly(fd: number): boolean {
    const uid = process.getuid?.();
    if (uid === undefined) return true; // Windows: no owner bits to check
    const file = fstatSync(fd);
    const refuse = (why: string): never => {
      throw this.options.refuse(
        `${this.options.label} ${this.path} ${why}: someone else could have written its ${this.options.contents}; it was left as it is (chmod 600 it, or move it to a folder of your own)`,
      );
    };
    const why = whyOpenToOthers(file, uid);
    if (why) refuse(why);
    // Every folder the path passes through on its way to the file: the folders above it, each
    // link's own folder and the folders above each link's target (a link in the middle of a chain,
    // or a folder above, that others may write could be re-pointed or renamed at another file).
    // Each folder must be ours or root's and writable by nobody else (unless sticky): a folder
    // another user owns is one they may write. Each link followed must be ours or root's: in a
    // sticky folder its owner may replace it (a link has no mode of its own to ask).
    const walk = walkPath(this.path, (_, st) =>
      st.isSymbolicLink() ? whyLinkNotOurs(st, uid) : whyOpenToOthers(st, uid, { rootMayOwn: true, sticky: true }),
    );
    if ('gone' in walk) return false; // gone since it was opened
    if ('why' in walk) return refuse(walk.link ? `is reached through a link another user could replace (${walk.folder} ${walk.why})` : `is in a folder others may write (${walk.folder})`);
    const there = statSync(walk.real, { throwIfNoEntry: false });
    if (there === undefined || there.ino !== file.ino || there.dev !== file.dev) return false;
    if ((file.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
    return true;
  }
}

/** A link is ours or root's, or why not (who owns it: in a sticky folder they may replace it). */
function whyLinkNotOurs(st: Stats, uid: number): string | undefined {
  return st.uid === uid || st.uid === 0 ? undefined : `is owned by another user (uid ${st.uid})`;
}

/**
 * What identifies one version of the file: it is read again only when this changes. The ctime is
 * in it: an in-place edit of the same size whose mtime was put back (`rsync -t`, `touch -r`)
 * changes nothing else, and no one can set a ctime.
 */
function stampOf(s: BigIntStats): string {
  return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}:${s.mode}:${s.uid}`;
}
