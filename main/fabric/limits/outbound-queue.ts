import type { Writable } from 'node:stream';
import type { AbortLike } from '../../jsonrpc/index.js';
import { CLOSE_GRACE_MS, OUTBOUND_QUEUE_BYTES, OUTBOUND_QUEUE_FRAMES } from './constants.js';

/**
 * The frames a connection has yet to write: at most `capacity` of them and at most `maxBytes`
 * bytes, counting what the stream has taken and not yet written (its `writableLength`). `send`
 * resolves once its frame is queued; when there is no room the producer waits (in order), which is
 * the back-pressure. A slow reader only ever slows producers down: nothing here closes it.
 *
 * A frame larger than `maxBytes` (a frame may be up to the frame cap, 33 MiB) would never find
 * room, so it is admitted alone: when nothing is queued before it and the stream is not backed up
 * (it would take the frame at once). Such a frame is handed to the stream straight away, and the
 * next frame waits until the stream has written it. So what the queue and the stream hold for a
 * peer that stops reading is at most `maxBytes`, or one frame and the stream's high-water mark
 * when that frame is larger; a producer's frame waiting for room comes on top (see `heldBytes`).
 *
 * The queue is also how a connection ends. `stop` drops what is queued (the stream is about to be
 * destroyed: a decode error gets no reply). `finish` writes what is queued plus a last frame,
 * ends the stream and destroys it once the peer has closed its end too, or after a grace period:
 * a refused hello's error reaches the peer before the connection goes, and a peer that never
 * reads or never closes cannot keep it open.
 */
export class OutboundQueue {
  private readonly frames: Queued[] = [];
  private readonly waiting: Waiter[] = [];
  /** UTF-8 bytes of the frames queued and waiting (newlines included). */
  private held = 0;
  /** UTF-8 bytes of the frames queued (not those waiting): what `maxBytes` bounds, with the stream's. */
  private queuedBytes = 0;
  private writing = false;
  /** Set once nothing more may be sent. */
  private stopped: Error | undefined;
  /** Set by `finish`: end the stream once the queue is written. */
  private ending = false;
  private gone: Promise<void> | undefined;
  /** Called once no producer waits any more (see `whenNoWaiters`). */
  private noWaiters: (() => void)[] = [];

  constructor(
    private readonly stream: Writable,
    readonly capacity: number = OUTBOUND_QUEUE_FRAMES,
    readonly maxBytes: number = OUTBOUND_QUEUE_BYTES,
  ) {}

  /** Frames queued and not yet handed to the stream. */
  get length(): number {
    return this.frames.length;
  }

  /** Producers waiting for room. */
  get waiters(): number {
    return this.waiting.length;
  }

  /**
   * What this queue holds for its peer, in UTF-8 bytes: the frames queued and the frames of the
   * producers waiting for room (not what the stream itself has taken to write). The queued part is
   * bounded by `maxBytes` (or is one larger frame alone); the waiting part by the producers, each
   * of which waits with one frame (a connection stops reading while its frames wait).
   */
  get heldBytes(): number {
    return this.held;
  }

  /**
   * Resolves once no producer waits for room (at once when none does), or when the queue stops.
   * A connection stops reading while producers wait, so that a peer which sends calls but never
   * reads their answers cannot make the answers pile up without bound.
   */
  whenNoWaiters(): Promise<void> {
    if (this.waiting.length === 0 || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.noWaiters.push(resolve));
  }

  /**
   * Queues one line (the newline is added here); waits while there is no room for it. A line sent with a
   * `signal` that is still waiting for room is dropped by `withdraw(signal)` (never written: its
   * `send` rejects with the signal's reason); with a signal already aborted it is not taken at all.
   */
  send(line: string, signal?: AbortLike): Promise<void> {
    if (this.stopped) return Promise.reject(this.stopped);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const bytes = frameBytes(line);
    if (this.waiting.length === 0 && this.hasRoom(bytes)) {
      this.enqueue(line, bytes);
      return Promise.resolve();
    }
    return new Promise((queued, failed) => {
      this.held += bytes;
      this.waiting.push({ line, bytes, queued, failed, signal });
    });
  }

  /**
   * `send` without a promise when none is needed: queues `line` at once when there is room and
   * returns undefined (also when the queue has stopped: the line is dropped), else returns `send`'s
   * promise. For frames sent at a high rate (progress), where a settled promise per frame is waste.
   */
  offer(line: string, signal?: AbortLike): Promise<void> | undefined {
    if (this.stopped || signal?.aborted) return undefined;
    // The common case, a line with nothing before it: nothing queued, nobody waiting, no write
    // waiting for `drain`, a stream taking more. It has room whatever its size (see `hasRoom`) and
    // `pump` would write it at once: written here, without a size counted or an entry made and
    // taken back (inline, not a helper: one function fewer to warm up on every frame's path).
    const stream = this.stream;
    if (!this.writing && this.frames.length === 0 && this.waiting.length === 0 && !stream.writableNeedDrain && !stream.destroyed && !stream.writableEnded) {
      if (!stream.write(`${line}\n`)) this.awaitDrain();
      return undefined;
    }
    const bytes = frameBytes(line);
    if (this.waiting.length === 0 && this.hasRoom(bytes)) {
      this.enqueue(line, bytes);
      return undefined;
    }
    return this.send(line, signal);
  }

  /**
   * Drops the lines sent with `signal` that still wait for room (their call was cancelled): called
   * by whoever aborts it, so that no listener is added per line. Returns how many it dropped (a
   * line already queued or written is not dropped).
   */
  withdraw(signal: AbortLike): number {
    const reason = abortReason(signal);
    let dropped = 0;
    for (let at = this.waiting.length - 1; at >= 0; at--) {
      const waiter = this.waiting[at]!;
      if (waiter.signal !== signal) continue;
      this.waiting.splice(at, 1);
      this.held -= waiter.bytes;
      waiter.failed(reason);
      dropped++;
    }
    if (this.waiting.length === 0) this.notifyNoWaiters();
    return dropped;
  }

  /** Fails every waiting producer and drops what is queued: the connection is gone. */
  stop(reason: Error): void {
    this.refuseMore(reason);
    this.frames.length = 0;
    this.held = 0;
    this.queuedBytes = 0;
  }

  /**
   * Ends the connection gracefully: no more sends (waiting producers fail with `reason`), what is
   * queued and then `lastLine` (if any) are written, the stream is ended, and it is destroyed when
   * it closes or `graceMs` after this call, whichever is first. Resolves once it is destroyed.
   */
  finish(reason: Error, lastLine?: string, graceMs: number = CLOSE_GRACE_MS): Promise<void> {
    if (this.gone) return this.gone;
    const wasStopped = this.stopped !== undefined;
    this.refuseMore(reason);
    if (wasStopped) this.frames.length = 0;
    else if (lastLine !== undefined) {
      const bytes = frameBytes(lastLine);
      this.held += bytes;
      this.queuedBytes += bytes;
      this.frames.push({ line: lastLine, bytes });
    }
    this.ending = true;
    const stream = this.stream;
    this.gone = new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stream.off('close', done);
        stream.destroy();
        resolve();
      };
      const timer = setTimeout(done, graceMs);
      if (stream.destroyed) return done();
      stream.once('close', done);
      this.pump();
    });
    return this.gone;
  }

  private refuseMore(reason: Error): void {
    this.stopped ??= reason;
    for (const waiter of this.waiting.splice(0)) {
      this.held -= waiter.bytes;
      waiter.failed(reason);
    }
    this.notifyNoWaiters();
  }

  private notifyNoWaiters(): void {
    for (const resolve of this.noWaiters.splice(0)) resolve();
  }

  /**
   * Whether a frame of `bytes` may be queued now: within both caps, counting what the stream holds;
   * or alone, when nothing is queued and the stream is not backed up (a frame over `maxBytes`
   * would otherwise wait for ever). The queue is its stream's only writer, so a stream that needs
   * to drain has a `drain` listener of `pump`'s, which admits the waiting.
   */
  private hasRoom(bytes: number): boolean {
    if (this.frames.length === 0 && !this.stream.writableNeedDrain) return true;
    return this.frames.length < this.capacity && this.queuedBytes + this.stream.writableLength + bytes <= this.maxBytes;
  }

  /** The stream is full: write nothing more until it drains, then admit the waiting and go on. */
  private awaitDrain(): void {
    this.writing = true;
    this.stream.once('drain', () => {
      this.writing = false;
      // The stream has written what it held: room for the waiting, even with nothing queued.
      this.admitWaiters();
      this.pump();
    });
  }

  /** Queues a line that has room and starts writing. */
  private enqueue(line: string, bytes: number): void {
    this.held += bytes;
    this.queuedBytes += bytes;
    this.frames.push({ line, bytes });
    this.pump();
  }

  /** Queues waiting lines, in order, while the first has room (called as frames reach the stream). */
  private admitWaiters(): void {
    while (this.waiting.length > 0 && this.hasRoom(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!;
      this.queuedBytes += next.bytes;
      this.frames.push(next);
      next.queued();
    }
    if (this.waiting.length === 0 && this.noWaiters.length > 0) this.notifyNoWaiters();
  }

  private pump(): void {
    if (this.writing) return;
    this.writing = true;
    while (this.frames.length > 0) {
      if (this.stream.destroyed || this.stream.writableEnded) break;
      const { line, bytes } = this.frames.shift()!;
      this.held -= bytes;
      this.queuedBytes -= bytes;
      const more = this.stream.write(`${line}\n`);
      this.admitWaiters();
      if (!more) {
        this.awaitDrain();
        return;
      }
    }
    this.writing = false;
    if (this.ending && this.frames.length === 0 && !this.stream.destroyed && !this.stream.writableEnded) this.stream.end();
  }
}

/** A line and its size, measured once (`frameBytes`) when it is sent. */
interface Queued {
  line: string;
  bytes: number;
}

interface Waiter extends Queued {
  queued: () => void;
  failed: (err: Error) => void;
  /** What `withdraw` drops it by. */
  signal: AbortLike | undefined;
}

/** A line's size on the wire: its UTF-8 bytes and the newline. */
function frameBytes(line: string): number {
  return Buffer.byteLength(line, 'utf8') + 1;
}

function abortReason(signal: AbortLike): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
}
