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
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new RulesFileError(`approvals file ${path}: ${(err as Error).message}`);
  }
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
    this.cachedStamp = now;
    return this.cached;
  }

  /** Reads the file, applies `change` to its rules and writes the result (refused, the file untouched, when it cannot be read). */
  update(change: (rules: ApprovalRule[]) => ApprovalRule[]): void {
    const next = change([...this.read()]);
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
    chmodSync(temp, 0o600);
    renameSync(temp, this.path);
    this.cached = next;
    this.cachedStamp = stamp(this.path);
  }
}
