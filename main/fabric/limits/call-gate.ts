import { wireError, type WireError } from '../wire/wire-error.js';
import { CALL_BURST, CALLS_PER_SECOND, MAX_IN_FLIGHT_CALLS } from './constants.js';
import { TokenBucket } from './token-bucket.js';

export interface CallGateOptions {
  maxInFlight?: number;
  callsPerSecond?: number;
  burst?: number;
  /** Milliseconds, monotonic (default `performance.now`). */
  now?: () => number;
}

/**
 * Admits a peer's calls: at most `MAX_IN_FLIGHT_CALLS` at once and `CALLS_PER_SECOND` (burst
 * `CALL_BURST`). A call past either limit is refused alone; the connection stays. The in-flight
 * check comes first, and a call it refuses costs no token.
 */
export class CallGate {
  private inFlight = 0;
  private readonly maxInFlight: number;
  private readonly bucket: TokenBucket;
  private readonly callsPerSecond: number;

  constructor(options: CallGateOptions = {}) {
    this.maxInFlight = options.maxInFlight ?? MAX_IN_FLIGHT_CALLS;
    this.callsPerSecond = options.callsPerSecond ?? CALLS_PER_SECOND;
    this.bucket = new TokenBucket(this.callsPerSecond, options.burst ?? CALL_BURST, options.now);
  }

  /** Undefined when the call may run (call `release` when it ends), else the refusal to send. */
  admit(): WireError | undefined {
    if (this.inFlight >= this.maxInFlight) {
      return wireError({ kind: 'refused', reason: `too many calls in flight: at most ${this.maxInFlight} per connection` });
    }
    if (!this.bucket.take()) {
      return wireError({ kind: 'refused', reason: `too many calls: at most ${this.callsPerSecond} per second per connection` });
    }
    this.inFlight++;
    return undefined;
  }

  release(): void {
    this.inFlight--;
  }

  get active(): number {
    return this.inFlight;
  }
}
