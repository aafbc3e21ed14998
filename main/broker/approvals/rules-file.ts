import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { ApprovalRule } from './types.js';

/** The file "always" rules live in: `{ "version": 1, "rules": [...] }`. A task's rules are never written. */
const RulesFileShape = z.strictObject({ version: z.literal(1), rules: z.array(ApprovalRule.omit({ task: true }).strict()) });

/** A rules file that cannot be read as one: it is left as it is, and nothing is written over it. */
export class RulesFileError extends Error {
  override readonly name = 'RulesFileError';
}

/** What identifies one version of the file: it is read again only when this changes. */
function stamp(path: string): string | undefined {
  try {
    const s = statSync(path);
    return `${s.ino}:${s.size}:${s.mtimeMs}:${s.mode}:${s.uid}`;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new RulesFileError(`approvals file ${path}: ${(err as Error).message}`);
  }
}

/**
 * Refuses a file someone else could have written rules into: one owned by another user, or that
 * its group or others may write (or in a directory they may write, without the sticky bit, where
 * they could rename another file over it). One others may only read is made owner-only.
 */
function checkOwnerOnly(path: string): void {
  const uid = process.getuid?.();
  if (uid === undefined) return; // Windows: no owner bits to check
  const file = statSync(path);
  const folder = statSync(dirname(path));
  const refuse = (why: string): never => {
    throw new RulesFileError(`approvals file ${path} ${why}: someone else could have written its rules; it was left as it is (chmod 600 it, or move it to a folder of your own)`);
  };
  if (file.uid !== uid) refuse(`is owned by another user (uid ${file.uid})`);
  if ((file.mode & 0o022) !== 0) refuse(`is writable by ${file.mode & 0o002 ? 'others' : 'its group'} (mode ${(file.mode & 0o777).toString(8)})`);
  if ((folder.mode & 0o022) !== 0 && (folder.mode & 0o1000) === 0) refuse(`is in a folder others may write (${dirname(path)})`);
  if ((file.mode & 0o077) !== 0) chmodSync(path, 0o600);
}

/**
 * The "always" rules on disk (JSON, owner-only 0600), validated on every read; written atomically
 * (a temporary file in the same directory, synced, then renamed over it). Read again when another
 * process (`chatty-gateway approvals revoke`) has changed it, so that a revoked rule stays revoked.
 */
export class RulesFile {
  private cached: ApprovalRule[] = [];
  private cachedStamp: string | undefined = 'unread';

  constructor(readonly path: string) {}

  /** The rules in the file (none when it does not exist); throws `RulesFileError` naming the file when it is malformed. */
  read(): ApprovalRule[] {
    const now = stamp(this.path);
    if (now === this.cachedStamp) return this.cached;
    if (now === undefined) {
      this.cached = [];
      this.cachedStamp = undefined;
      return this.cached;
    }
    checkOwnerOnly(this.path);
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      throw new RulesFileError(`approvals file ${this.path}: ${(err as Error).message}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new RulesFileError(`approvals file ${this.path} is not valid JSON (${(err as Error).message}); it was left as it is`);
    }
    const parsed = RulesFileShape.safeParse(json);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      const where = first?.path.length ? ` at ${first.path.join('.')}` : '';
      throw new RulesFileError(`approvals file ${this.path} is not a rules file${where}: ${first?.message ?? 'invalid'}; it was left as it is`);
    }
    const ids = new Set<string>();
    for (const rule of parsed.data.rules) {
      if (ids.has(rule.id)) throw new RulesFileError(`approvals file ${this.path} has the rule id ${JSON.stringify(rule.id)} twice; it was left as it is`);
      ids.add(rule.id);
    }
    this.cached = parsed.data.rules;
    this.cachedStamp = stamp(this.path); // after a chmod 600 of a readable file
    return this.cached;
  }

  /** Reads the file, applies `change` (pure: it may be called again) to its rules and writes the result (refused, the file untouched, when it cannot be read). */
  update(change: (rules: ApprovalRule[]) => ApprovalRule[]): void {
    // Another process (`approvals revoke`) may write the file between this read and this write:
    // when it has, start again from what it wrote, so that a revoked rule is not written back.
    for (let attempt = 1; ; attempt++) {
      const read = this.read();
      const readStamp = this.cachedStamp;
      const next = change([...read]);
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
      const temp = `${this.path}.${randomBytes(6).toString('hex')}.tmp`;
      const fd = openSync(temp, 'wx', 0o600);
      try {
        writeSync(fd, `${JSON.stringify({ version: 1, rules: next }, null, 2)}\n`);
        fsyncSync(fd);
      } catch (err) {
        closeSync(fd);
        rmSync(temp, { force: true });
        throw err;
      }
      closeSync(fd);
      if (stamp(this.path) !== readStamp && attempt < 5) {
        rmSync(temp, { force: true });
        continue;
      }
      chmodSync(temp, 0o600);
      renameSync(temp, this.path);
      this.cached = next;
      this.cachedStamp = stamp(this.path);
      return;
    }
  }

}
