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
  admit(messageBytes: number): { pass: true } | { pass: false; notice?: string } {
    const bytes = messageBytes + this.lineCost;
    const now = this.now();
    this.tokens = Math.min(this.burstBytes, this.tokens + ((now - this.filledAt) / 1000) * this.bytesPerSecond);
    this.filledAt = now;
    if (bytes <= this.tokens) {
      this.tokens -= bytes;
      return { pass: true };
    }
    this.dropped++;
    if (now - this.noticedAt < 1000) return { pass: false };
    this.noticedAt = now;
    const count = this.dropped;
    this.dropped = 0;
    return {
      pass: false,
      notice: `dropped ${count} log line(s) over the module's budget (${this.burstBytes} bytes at once, then ${this.bytesPerSecond} bytes a second, across its calls, each line counted ${this.lineCost} bytes more than its message); said at most once a second`,
    };
  }
}
