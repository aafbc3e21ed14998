import { MAX_NETWORK_LINES_PER_CALL, MAX_NETWORK_LOG_BYTES_PER_CALL } from '../limits.js';
import type { RequestLogLine } from '../network/guest-network.js';
import { clipped, MAX_LINE_WORD_CHARS } from '../network/request-log.js';
import { cutUtf8 } from './host-imports.js';

/** How many hosts a call's note names of the requests it sent whose lines were dropped (and the module's rate, of those it drops). */
export const MAX_NAMED_TARGETS = 8;

/** What one call's budget of one kind of request line has taken. */
interface Budget {
  lines: number;
  bytes: number;
  dropped: number;
}

/** A request line to post to the main thread: the line, and whether its request was sent (the handle's rate for it). */
export interface PostedRequestLine {
  level: 'info' | 'warn';
  message: string;
  sent: boolean;
  /** The hosts of requests sent it tells of (its own; a note's, those it names): the handle's rate names them if it drops the line. */
  targets?: readonly string[];
}

/**
 * The host's lines about one call's requests (`network: GET api.example.com:443 → 200, …`), in
 * two budgets of `MAX_NETWORK_LINES_PER_CALL` lines and `MAX_NETWORK_LOG_BYTES_PER_CALL` each:
 * requests sent (handed to the fetch thread, so to an allowed host) and requests refused before
 * anything left. A refused `fetch` costs the guest only its line, so a loop of them is a flood,
 * bounded; before, the two shared one budget, and 1,000 refused requests (or four to hosts of a
 * million letters) left no line for the request that then went out. Past a budget lines are
 * dropped and counted; the call's note names the hosts whose sent requests went unlogged.
 */
export class RequestLines {
  private readonly sent: Budget = { lines: 0, bytes: 0, dropped: 0 };
  private readonly refused: Budget = { lines: 0, bytes: 0, dropped: 0 };
  /** The hosts of sent requests whose lines were dropped, in the order first dropped (at most `MAX_NAMED_TARGETS`). */
  private readonly droppedTargets = new Set<string>();
  /** Dropped lines of sent requests to hosts past those named. */
  private moreTargets = 0;

  constructor(private readonly maxLineBytes: number) {}

  /** The line to post, or `undefined` when its budget is used up (dropped and counted). */
  add(entry: RequestLogLine): PostedRequestLine | undefined {
    // Short already (requestLine clips what the guest chose); cut to a line's cap all the same.
    const message = cutUtf8(entry.line, this.maxLineBytes);
    const bytes = Buffer.byteLength(message, 'utf8');
    const budget = entry.sent ? this.sent : this.refused;
    if (budget.lines >= MAX_NETWORK_LINES_PER_CALL || budget.bytes + bytes > MAX_NETWORK_LOG_BYTES_PER_CALL) {
      budget.dropped++;
      if (entry.sent) this.noteTarget(entry.target);
      return undefined;
    }
    budget.lines++;
    budget.bytes += bytes;
    return entry.sent ? { level: entry.level, message, sent: true, targets: [clipped(entry.target, MAX_LINE_WORD_CHARS)] } : { level: entry.level, message, sent: false };
  }

  /** The call's notes of what was dropped (none when nothing was), and a fresh budget for the next call. */
  settle(): PostedRequestLine[] {
    const notes: PostedRequestLine[] = [];
    const limits = `(${MAX_NETWORK_LINES_PER_CALL} lines, ${MAX_NETWORK_LOG_BYTES_PER_CALL} bytes)`;
    if (this.sent.dropped > 0) {
      const named = [...this.droppedTargets].join(', ');
      const more = this.moreTargets > 0 ? `, and ${this.moreTargets} to other hosts` : '';
      notes.push({ level: 'warn', message: `dropped ${this.sent.dropped} network line(s) of requests sent, over the per-call budget of request lines ${limits}: the call made more requests than were logged, to ${named}${more}`, sent: true, targets: [...this.droppedTargets] });
    }
    if (this.refused.dropped > 0) {
      notes.push({ level: 'warn', message: `dropped ${this.refused.dropped} network line(s) of requests refused, over the per-call budget of request lines ${limits}: the call made more requests than were logged`, sent: false });
    }
    for (const b of [this.sent, this.refused]) {
      b.lines = 0;
      b.bytes = 0;
      b.dropped = 0;
    }
    this.droppedTargets.clear();
    this.moreTargets = 0;
    return notes;
  }

  private noteTarget(target: string): void {
    const shown = clipped(target, MAX_LINE_WORD_CHARS);
    if (this.droppedTargets.has(shown)) return;
    if (this.droppedTargets.size < MAX_NAMED_TARGETS) this.droppedTargets.add(shown);
    else this.moreTargets++;
  }
}
