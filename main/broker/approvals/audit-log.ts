import { EventEmitter } from 'node:events';
import { appendFileSync, chmodSync } from 'node:fs';
import { replaceHidden } from '../../display/index.js';
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
  return replaceHidden(JSON.stringify(row), jsonEscape);
}

/** `\u202e`; an astral character as its surrogate pair (`\udb40\udc41`), as JSON spells it. */
function jsonEscape(char: string): string {
  return Array.from({ length: char.length }, (_, i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');
}
