import type { Writable } from 'node:stream';
import { OUTBOUND_QUEUE_FRAMES } from './constants.js';

/**
 * The frames a connection has yet to write, at most `capacity` of them. `send` resolves once its
 * frame is queued; when the queue is full the producer waits for room (in order), which is the
 * back-pressure. A slow reader only ever slows producers down: nothing here closes it.
 */
export class OutboundQueue {
  private readonly frames: string[] = [];
  private readonly waiting: { line: string; queued: () => void; failed: (err: Error) => void }[] = [];
  private writing = false;
  private stopped: Error | undefined;

  constructor(
    private readonly stream: Writable,
    readonly capacity: number = OUTBOUND_QUEUE_FRAMES,
  ) {}

  /** Frames queued and not yet handed to the stream. */
  get length(): number {
    return this.frames.length;
  }

  /** Producers waiting for room. */
  get waiters(): number {
    return this.waiting.length;
  }

  /** Queues one line (the newline is added here); waits while the queue is full. */
  send(line: string): Promise<void> {
    if (this.stopped) return Promise.reject(this.stopped);
    if (this.waiting.length === 0 && this.frames.length < this.capacity) {
      this.frames.push(line);
      this.pump();
      return Promise.resolve();
    }
    return new Promise((queued, failed) => this.waiting.push({ line, queued, failed }));
  }

  /** Fails every waiting producer and drops what is queued: the connection is gone. */
  stop(reason: Error): void {
    this.stopped ??= reason;
    this.frames.length = 0;
    for (const waiter of this.waiting.splice(0)) waiter.failed(reason);
  }

  private admitWaiters(): void {
    while (this.waiting.length > 0 && this.frames.length < this.capacity) {
      const next = this.waiting.shift()!;
      this.frames.push(next.line);
      next.queued();
    }
  }

  private pump(): void {
    if (this.writing) return;
    this.writing = true;
    while (this.frames.length > 0 && !this.stopped) {
      const line = this.frames.shift()!;
      this.admitWaiters();
      if (this.stream.destroyed) break;
      if (!this.stream.write(`${line}\n`)) {
        this.stream.once('drain', () => {
          this.writing = false;
          this.pump();
        });
        return;
      }
    }
    this.writing = false;
  }
}
