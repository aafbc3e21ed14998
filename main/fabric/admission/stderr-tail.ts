import type { Readable } from 'node:stream';
import { STDERR_TAIL_BYTES } from '../limits/constants.js';

/**
 * Keeps the last `maxBytes` a child wrote to stderr, for the message when it fails. One ring of
 * `maxBytes`, the chunks copied in: a chunk kept as it came costs some hundreds of bytes of
 * bookkeeping whatever its size, so a worker writing its stderr a byte per read made the tail cost
 * ~130 times its bytes.
 */
export class StderrTail {
  private ring: Buffer | undefined;
  /** Where the next byte goes. */
  private at = 0;
  /** Whether the ring has wrapped (every byte of it is kept text). */
  private full = false;

  constructor(
    stream: Readable | null,
    private readonly maxBytes: number = STDERR_TAIL_BYTES,
  ) {
    stream?.on('data', (chunk: Buffer) => this.add(chunk));
  }

  private add(chunk: Buffer): void {
    if (this.maxBytes <= 0) return;
    this.ring ??= Buffer.alloc(this.maxBytes);
    const kept = chunk.length > this.maxBytes ? chunk.subarray(chunk.length - this.maxBytes) : chunk;
    const first = kept.copy(this.ring, this.at);
    if (first < kept.length) kept.copy(this.ring, 0, first); // the rest wraps to the start
    const end = this.at + kept.length;
    if (end >= this.maxBytes) this.full = true; // wrapped, or filled to the end
    this.at = end % this.maxBytes;
  }

  /** The kept bytes as text (a multi-byte character cut at the start shows as U+FFFD). */
  text(): string {
    if (!this.ring) return '';
    if (!this.full) return this.ring.toString('utf8', 0, this.at);
    return Buffer.concat([this.ring.subarray(this.at), this.ring.subarray(0, this.at)]).toString('utf8');
  }
}
