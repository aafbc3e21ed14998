import {
  LOG_LINE_COST,
  MAX_LOG_BYTES,
  MAX_LOG_BYTES_PER_CALL,
  MAX_LOG_BYTES_PER_SECOND,
  MAX_LOG_LINES_PER_CALL,
  MAX_NETWORK_LINES_PER_CALL,
  MAX_NETWORK_LOG_BYTES_PER_CALL,
  MAX_NETWORK_LOG_BYTES_PER_SECOND,
} from '../limits.js';
import { MAX_NAMED_TARGETS } from '../worker/request-lines.js';

/**
 * A module's log lines over time, across its calls and its engine starts: the worker holds each
 * call (and each start) to `MAX_LOG_BYTES_PER_CALL`, but a client calling in a loop picks how many
 * calls there are, and every call was a new budget. Here, on the main thread, a token bucket: a
 * module may log a burst of one call's whole budget (its bytes and its lines, and one line more:
 * the worker's own note that it dropped lines of that call), and `MAX_LOG_BYTES_PER_SECOND` a
 * second after that. Each line costs its bytes plus `lineCost` (a record in the log whatever its
 * length: the guest picks how it cuts its lines); a line that does not fit is dropped. Drops are said at most once a second, with
 * how many (`admit` hands back the notice to log).
 */
export class LogRate {
  private tokens: number;
  private filledAt: number;
  private dropped = 0;
  private noticedAt = Number.NEGATIVE_INFINITY;
  /** The hosts of requests sent whose lines were dropped since the last notice, in the order first dropped (at most `MAX_NAMED_TARGETS`). */
  private readonly targets = new Set<string>();
  /** Dropped lines of requests sent to hosts past those named. */
  private otherTargets = 0;

  constructor(
    private readonly now: () => number,
    readonly bytesPerSecond = MAX_LOG_BYTES_PER_SECOND,
    readonly burstBytes = MAX_LOG_BYTES_PER_CALL + MAX_LOG_LINES_PER_CALL * LOG_LINE_COST + MAX_LOG_BYTES + LOG_LINE_COST,
    readonly lineCost = LOG_LINE_COST,
  ) {
    this.tokens = burstBytes;
    this.filledAt = now();
  }

  /**
   * The rate of the host's lines about a module's requests (`network: GET …`), apart from the
   * guest's: a burst of one call's budget of them (and its note of what it dropped), then
   * `MAX_NETWORK_LOG_BYTES_PER_SECOND`.
   */
  static forNetworkLines(now: () => number): LogRate {
    const burst = MAX_NETWORK_LOG_BYTES_PER_CALL + MAX_NETWORK_LINES_PER_CALL * LOG_LINE_COST + MAX_LOG_BYTES + LOG_LINE_COST;
    return new LogRate(now, MAX_NETWORK_LOG_BYTES_PER_SECOND, burst);
  }

  /**
   * Whether a line of `messageBytes` (UTF-8) may be logged now (`pass`), charged those bytes plus
   * `lineCost`, or is dropped; a drop may come with the warning to log in its place (`notice`), at
   * most one a second.
   */
  admit(messageBytes: number, targets: readonly string[] = []): { pass: true } | { pass: false; notice?: string } {
    const bytes = messageBytes + this.lineCost;
    const now = this.now();
    this.tokens = Math.min(this.burstBytes, this.tokens + ((now - this.filledAt) / 1000) * this.bytesPerSecond);
    this.filledAt = now;
    if (bytes <= this.tokens) {
      this.tokens -= bytes;
      return { pass: true };
    }
    this.dropped++;
    for (const target of targets) this.noteTarget(target);
    const notice = this.noticeAt(now);
    return notice === undefined ? { pass: false } : { pass: false, notice };
  }

  /**
   * In how many ms the drops not said yet may be said (`pendingNotice`), or `undefined` when there
   * are none: the module handle asks again then, so the last drops of a burst are said too, not
   * only at a drop a second later (which may never come).
   */
  noticeDueInMs(): number | undefined {
    return this.dropped === 0 ? undefined : Math.max(0, this.noticedAt + 1000 - this.now());
  }

  /** The notice of the drops not said yet, once a second has passed since the last one; else `undefined`. */
  pendingNotice(): string | undefined {
    return this.dropped === 0 ? undefined : this.noticeAt(this.now());
  }

  private noticeAt(now: number): string | undefined {
    if (now - this.noticedAt < 1000) return undefined;
    this.noticedAt = now;
    const count = this.dropped;
    const named = [...this.targets].join(', ');
    const more = this.otherTargets > 0 ? `, and ${this.otherTargets} to other hosts` : '';
    const sent = named === '' ? '' : `; among them requests sent to ${named}${more}`;
    this.dropped = 0;
    this.targets.clear();
    this.otherTargets = 0;
    return `dropped ${count} log line(s) over the module's budget (${this.burstBytes} bytes at once, then ${this.bytesPerSecond} bytes a second, across its calls, each line counted ${this.lineCost} bytes more than its message)${sent}; said at most once a second`;
  }

  /** `target` as the worker clipped it (`request-lines.ts`). */
  private noteTarget(target: string): void {
    if (this.targets.has(target)) return;
    if (this.targets.size < MAX_NAMED_TARGETS) this.targets.add(target);
    else this.otherTargets++;
  }
}
