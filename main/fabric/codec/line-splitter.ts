/**
 * Splits a byte stream into lines of at most `maxBytes` (newline excluded). A line that grows past
 * the cap is reported as soon as it does, and its bytes are let go: an oversized line is never
 * held whole. After that the splitter is spent (the connection closes).
 *
 * Complete lines come out in blocks: one Buffer holding one or more whole lines, each ending in a
 * newline. The codec checks and converts a block's UTF-8 in one call instead of one per line (a
 * newline byte never occurs inside a multi-byte sequence, so this is the same check).
 */
export type SplitResult = { blocks: Buffer[]; oversized: boolean };

const NEWLINE = 0x0a;

export class LineSplitter {
  private parts: Buffer[] = [];
  private pending = 0;
  private spent = false;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): SplitResult {
    const blocks: Buffer[] = [];
    if (this.spent) return { blocks, oversized: false };
    let from = 0;
    let blockStart = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, from);
      const end = nl < 0 ? chunk.length : nl;
      if (this.pending + (end - from) > this.maxBytes) {
        if (from > blockStart) blocks.push(chunk.subarray(blockStart, from));
        this.spent = true;
        this.parts = [];
        this.pending = 0;
        return { blocks, oversized: true };
      }
      if (nl < 0) {
        if (from > blockStart) blocks.push(chunk.subarray(blockStart, from));
        if (end > from) {
          this.parts.push(chunk.subarray(from));
          this.pending += end - from;
        }
        return { blocks, oversized: false };
      }
      if (this.parts.length > 0) {
        // The end of a line begun in an earlier chunk: a block of its own.
        this.parts.push(chunk.subarray(from, nl + 1));
        blocks.push(Buffer.concat(this.parts, this.pending + (nl + 1 - from)));
        this.parts = [];
        this.pending = 0;
        blockStart = nl + 1;
      }
      from = nl + 1;
    }
  }

  /** Bytes of an unfinished line still held (at most `maxBytes`). */
  get buffered(): number {
    return this.pending;
  }
}
