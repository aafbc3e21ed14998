/** What the broker keeps of one task's text by default (`BrokerOptions.maxTaskTextBytes`): 4 MiB. */
export const MAX_TASK_TEXT_BYTES = 4 * 1024 * 1024;

const encoder = new TextEncoder();

/**
 * The text of one task, as its result's `response` will hold it: at most `maxBytes` (UTF-8) of
 * it, the first half and the last half, with one line between them counting what was cut. A
 * callee streaming without end costs the broker that much and no more (its progress still
 * streams every chunk to a reading caller: that is not kept here).
 */
export class TaskText {
  private head = '';
  private headBytes = 0;
  private headFull = false;
  /** The tail, as UTF-8 pieces; `start` is the first live one (pieces before it were cut). */
  private readonly tail: Buffer[] = [];
  private start = 0;
  private tailBytes = 0;
  private cutBytes = 0;
  private readonly headCap: number;
  private readonly tailCap: number;

  constructor(readonly maxBytes: number = MAX_TASK_TEXT_BYTES) {
    this.headCap = Math.floor(maxBytes / 2);
    this.tailCap = maxBytes - this.headCap;
  }

  /** Bytes cut from the middle so far. */
  get cut(): number {
    return this.cutBytes;
  }

  append(text: string): void {
    if (!this.headFull) {
      const room = this.headCap - this.headBytes;
      const bytes = Buffer.byteLength(text, 'utf8');
      if (bytes <= room) {
        this.head += text;
        this.headBytes += bytes;
        return;
      }
      // What fits joins the head (whole characters only), the rest starts the tail.
      const { read, written } = encoder.encodeInto(text, new Uint8Array(room));
      this.head += text.slice(0, read);
      this.headBytes += written;
      this.headFull = true;
      text = text.slice(read);
    }
    const piece = Buffer.from(text, 'utf8');
    this.tail.push(piece);
    this.tailBytes += piece.length;
    this.trimTail();
  }

  /** The kept text: all of it, or its head, the line counting the cut, and its tail. */
  toString(): string {
    // Most texts fit in the head: no tail to join (a Buffer.concat of nothing costs ~3 µs a call).
    const tail = this.start === this.tail.length ? '' : Buffer.concat(this.tail.slice(this.start)).toString('utf8');
    if (this.cutBytes === 0) return this.head + tail;
    return `${this.head}\n[… ${this.cutBytes} bytes of this task's text cut here: the broker keeps at most ${this.maxBytes} bytes of it, its head and its tail …]\n${tail}`;
  }

  private trimTail(): void {
    while (this.tailBytes > this.tailCap) {
      const over = this.tailBytes - this.tailCap;
      const first = this.tail[this.start]!;
      if (first.length <= over) {
        this.tail[this.start++] = EMPTY;
        this.tailBytes -= first.length;
        this.cutBytes += first.length;
        continue;
      }
      // The cut may split a character: its remaining continuation bytes are cut too.
      let from = over;
      while (from < first.length && (first[from]! & 0xc0) === 0x80) from++;
      const rest = first.subarray(from);
      // A view keeps its whole piece alive: copied once it is under half of it (so each byte is copied at most twice).
      this.tail[this.start] = rest.length * 2 < first.length ? Buffer.from(rest) : rest;
      this.tailBytes -= from;
      this.cutBytes += from;
    }
    if (this.start > 1024 && this.start * 2 > this.tail.length) {
      this.tail.splice(0, this.start);
      this.start = 0;
    }
  }
}

const EMPTY = Buffer.alloc(0);
