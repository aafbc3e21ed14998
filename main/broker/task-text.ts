/** What the broker keeps of one task's text by default (`BrokerOptions.maxTaskTextBytes`): 4 MiB. */
export const MAX_TASK_TEXT_BYTES = 4 * 1024 * 1024;

const encoder = new TextEncoder();
/** A head's first buffer: most tasks' whole text fits, and it doubles from there up to the cap. */
const FIRST_HEAD_BYTES = 256;

/**
 * The text of one task, as its result's `response` will hold it: at most `maxBytes` (UTF-8) of
 * it, the first half and the last half, with one line between them counting what was cut. A
 * callee streaming without end costs the broker that much and no more, however it cuts its text
 * into chunks: the head is one byte buffer (doubling up to its half of the cap) and the tail a ring
 * of the other half, so a chunk costs its bytes, never an object of its own (one-character chunks
 * kept as strings and buffers cost ~80 times the cap). Text is kept as UTF-8: a lone surrogate a
 * worker sent is kept as U+FFFD (its progress still streams every chunk as it came).
 */
export class TaskText {
  private head = new Uint8Array(0);
  private headBytes = 0;
  private headFull = false;
  /** Made once the head is full: the last `tailCap` bytes of the rest, oldest at `tailAt` once it has wrapped. */
  private tail: Buffer | undefined;
  private tailAt = 0;
  /** Bytes that went past the head in all (kept in the tail or cut). */
  private passed = 0;
  private readonly headCap: number;
  private readonly tailCap: number;

  constructor(readonly maxBytes: number = MAX_TASK_TEXT_BYTES) {
    this.headCap = Math.floor(maxBytes / 2);
    this.tailCap = maxBytes - this.headCap;
  }

  /** Bytes cut from the middle so far (with the continuation bytes of a character the cut split). */
  get cut(): number {
    return this.passed <= this.tailCap ? 0 : this.passed - this.tailCap + this.splitBytes();
  }

  append(text: string): void {
    if (!this.headFull) {
      this.roomFor(text.length * 3); // UTF-8 takes at most 3 bytes a UTF-16 unit
      const { read, written } = encoder.encodeInto(text, this.head.subarray(this.headBytes));
      this.headBytes += written;
      if (read === text.length) return;
      // What fits joined the head (whole characters only); the rest starts the tail.
      this.headFull = true;
      text = text.slice(read);
    }
    const bytes = Buffer.from(text, 'utf8');
    this.passed += bytes.length;
    if (this.tailCap === 0) return;
    const tail = (this.tail ??= Buffer.alloc(this.tailCap));
    // Only the last tailCap bytes of a chunk can stay: the rest would be overwritten at once.
    let from = Math.max(0, bytes.length - this.tailCap);
    while (from < bytes.length) {
      const n = bytes.copy(tail, this.tailAt, from, Math.min(bytes.length, from + this.tailCap - this.tailAt));
      from += n;
      this.tailAt = (this.tailAt + n) % this.tailCap;
    }
  }

  /** The kept text: all of it, or its head, the line counting the cut, and its tail. */
  toString(): string {
    const head = Buffer.from(this.head.buffer, this.head.byteOffset, this.headBytes).toString('utf8');
    if (this.tail === undefined) return head;
    const tail = this.keptTail().subarray(this.splitBytes()).toString('utf8');
    const cut = this.cut;
    if (cut === 0) return head + tail;
    return `${head}\n[… ${cut} bytes of this task's text cut here: the broker keeps at most ${this.maxBytes} bytes of it, its head and its tail …]\n${tail}`;
  }

  /** Grows the head's buffer (doubling, up to its cap) to hold `more` bytes if it can. */
  private roomFor(more: number): void {
    const want = Math.min(this.headCap, this.headBytes + more);
    if (want <= this.head.length) return;
    const grown = new Uint8Array(Math.min(this.headCap, Math.max(want, FIRST_HEAD_BYTES, this.head.length * 2)));
    grown.set(this.head.subarray(0, this.headBytes));
    this.head = grown;
  }

  /** The tail's bytes, oldest first. */
  private keptTail(): Buffer {
    const tail = this.tail!;
    if (this.passed <= this.tailCap) return tail.subarray(0, this.passed);
    return this.tailAt === 0 ? tail : Buffer.concat([tail.subarray(this.tailAt), tail.subarray(0, this.tailAt)]);
  }

  /** Continuation bytes at the tail's start, of a character the cut split: cut too. */
  private splitBytes(): number {
    if (this.passed <= this.tailCap || this.tail === undefined) return 0;
    let n = 0;
    while (n < this.tailCap && (this.tail[(this.tailAt + n) % this.tailCap]! & 0xc0) === 0x80) n++;
    return n;
  }
}
