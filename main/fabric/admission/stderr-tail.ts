import type { Readable } from 'node:stream';
import { STDERR_TAIL_BYTES } from '../limits/constants.js';

/** Keeps the last `maxBytes` a child wrote to stderr, for the message when it fails. */
export class StderrTail {
  private chunks: Buffer[] = [];
  private bytes = 0;

  constructor(
    stream: Readable | null,
    private readonly maxBytes: number = STDERR_TAIL_BYTES,
  ) {
    stream?.on('data', (chunk: Buffer) => this.add(chunk));
  }

  private add(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes - this.chunks[0]!.length >= this.maxBytes) this.bytes -= this.chunks.shift()!.length;
  }

  /** The kept bytes as text (a multi-byte character cut at the start shows as U+FFFD). */
  text(): string {
    const all = Buffer.concat(this.chunks, this.bytes);
    return all.subarray(Math.max(0, all.length - this.maxBytes)).toString('utf8');
  }
}
