import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { appendFileSync, chmodSync } from 'node:fs';
import { replaceHidden } from '../../display/index.js';
import { hasLoneSurrogate } from './lone-surrogate.js';
import type { AuditRow } from './types.js';

/** The audit log's file name, in the runtime directory beside `edge.log`. */
export const APPROVALS_LOG_FILE = 'approvals.log';

/**
 * Every approval decision: one JSON line in `approvals.log` (owner-only, appended at once: a
 * decision is rare and must not be lost to a crash the way a batched line could be) and an event
 * for embedders (the desktop's audit view).
 */
export class AuditLog {
  private readonly events = new EventEmitter();
  private path: string | undefined;

  constructor(private readonly log: (message: string) => void = () => {}) {}

  /** Appends rows to `path` from now on (created 0600; an existing file is made 0600). */
  writeTo(path: string): void {
    appendFileSync(path, '', { mode: 0o600 });
    chmodSync(path, 0o600);
    this.path = path;
  }

  /** The file rows are appended to, while they are. */
  get file(): string | undefined {
    return this.path;
  }

  stopWriting(): void {
    this.path = undefined;
  }

  subscribe(listener: (row: AuditRow) => void): () => void {
    this.events.on('row', listener);
    return () => this.events.off('row', listener);
  }

  record(row: AuditRow): void {
    if (this.path !== undefined) {
      try {
        appendFileSync(this.path, `${auditLine(row)}\n`, { mode: 0o600 });
      } catch (err) {
        this.log(`approvals.log: could not write a row: ${(err as Error).message}`);
      }
    }
    for (const listener of this.events.listeners('row') as ((row: AuditRow) => void)[]) {
      try {
        listener(row);
      } catch (err) {
        this.log(`an approvals decision listener threw: ${(err as Error)?.message ?? String(err)}`);
      }
    }
  }
}

/**
 * One row as a line of the file: JSON, with every character the display rule hides (bidi
 * controls, C1 controls such as the 8-bit CSI, DEL, line separators, zero-width and tag
 * characters…) written as its `\u` escape. JSON.stringify leaves those raw, and a person reads
 * this file in a terminal or an editor that obeys them; a parser reads the same text back.
 */
export function auditLine(row: AuditRow): string {
  return replaceHidden(JSON.stringify(boundedRow(row)), jsonEscape);
}

/**
 * The most characters of a command or path a row of the file holds. A worker's calls decided at
 * once (a deny rule, the pending limit, no root, a deny mode) cost it only its call rate: whole
 * 16 Ki-character texts of control characters (6 bytes each as `\u0001`) made a row ~96 KiB, one
 * connection ~1 MB a second. Past it the row keeps the start and `cut` (the whole text's length
 * and SHA-256), so every decision still names exactly what was decided, in at most ~3 KiB of text.
 */
export const AUDIT_TEXT_CHARS = 512;

/**
 * The most code points of each "may run" line (and its program's name) a row of the file holds: as
 * many as the terminal shows (the command itself is in the row, its start, or its hash when cut).
 * At most 8 lines (`MAX_RUNS_NAMED`): ~13 KiB of escapes at the worst.
 */
export const AUDIT_RUN_CHARS = 200;

/** `row` with its command or path cut to `AUDIT_TEXT_CHARS` (never inside a surrogate pair), and `cut` naming the whole; each "may run" line cut to `AUDIT_RUN_CHARS`. */
function boundedRow(given: AuditRow): AuditRow {
  const row = given.runs === undefined ? given : { ...given, runs: given.runs.map(boundedRun) };
  const text = row.command_or_path;
  if (text.length <= AUDIT_TEXT_CHARS) return row;
  const end = /[\ud800-\udbff]/.test(text[AUDIT_TEXT_CHARS - 1]!) ? AUDIT_TEXT_CHARS - 1 : AUDIT_TEXT_CHARS;
  return { ...row, command_or_path: text.slice(0, end), cut: { chars: text.length, sha256: createHash('sha256').update(wtf8(text)).digest('hex') } };
}

/** A "may run" line cut at a code point (`chars`: how many it had), its program's name too: the row's listeners get it so too. */
export function boundedRun(run: NonNullable<AuditRow['runs']>[number]): NonNullable<AuditRow['runs']>[number] {
  const line = [...run.line];
  const program = [...run.program];
  return {
    program: program.length <= AUDIT_RUN_CHARS ? run.program : program.slice(0, AUDIT_RUN_CHARS).join(''),
    line: line.length <= AUDIT_RUN_CHARS ? run.line : line.slice(0, AUDIT_RUN_CHARS).join(''),
    ...(line.length > AUDIT_RUN_CHARS ? { chars: line.length } : run.chars !== undefined ? { chars: run.chars } : {}),
  };
}

/**
 * `text`'s UTF-8, with a lone surrogate written as UTF-8 writes any other code point (three bytes,
 * WTF-8) where Node writes U+FFFD: `x…\ud800` and `x…\ud801` hashed alike, so a cut row named two
 * different commands. The same bytes as UTF-8 for every well-formed text (`sha256sum` checks it).
 */
function wtf8(text: string): Buffer {
  if (!hasLoneSurrogate(text)) return Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  for (const char of text) {
    const unit = char.charCodeAt(0);
    if (char.length === 1 && unit >= 0xd800 && unit <= 0xdfff) parts.push(Buffer.from([0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]));
    else parts.push(Buffer.from(char, 'utf8'));
  }
  return Buffer.concat(parts);
}

/** `\u202e`; an astral character as its surrogate pair (`\udb40\udc41`), as JSON spells it. */
function jsonEscape(char: string): string {
  return Array.from({ length: char.length }, (_, i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');
}
