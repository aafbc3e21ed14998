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

/**
 * A piece of an unfinished line shorter than this is copied into an owned buffer (`spare`) instead
 * of kept as a view of its chunk. Each chunk a socket reads is a buffer of its own, costing some
 * hundreds of bytes whatever its size: a worker writing a line a byte per read made the broker keep
 * ~190 bytes per byte of it (a 33 MiB line, gigabytes). Pieces this long or longer are kept as they
 * are (their bookkeeping is a few % of them), so a large frame read in large chunks is not copied
 * one time more.
 */
const SMALL_PIECE_BYTES = 4096;
/** The size of each owned buffer small pieces are copied into. */
const SPARE_BYTES = 16 * 1024;
/**
 * A spare buffer this full or more is kept as it is (wasting at most 1/16 of it); one less full is
 * copied out at its exact size. At half, a line cut 2 KiB x4, 4 KiB… kept 16 KiB per 8 KiB of it
 * (1.7 bytes a byte).
 */
const SPARE_KEPT_BYTES = SPARE_BYTES - SPARE_BYTES / 16;

export class LineSplitter {
  private parts: Buffer[] = [];
  private pending = 0;
  private spent = false;
  /** Where small pieces of the unfinished line are copied (see `SMALL_PIECE_BYTES`); its first `spareUsed` bytes follow `parts`. */
  private spare: Buffer | undefined;
  private spareUsed = 0;

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
        this.spare = undefined;
        this.spareUsed = 0;
        return { blocks, oversized: true };
      }
      if (nl < 0) {
        if (from > blockStart) blocks.push(chunk.subarray(blockStart, from));
        if (end > from) this.hold(chunk.subarray(from));
        return { blocks, oversized: false };
      }
      if (this.pending > 0) {
        // The end of a line begun in an earlier chunk: a block of its own. The concat below copies
        // the spare's bytes: they go in as a view, not first copied out at their exact size.
        this.flushSpare(false);
        this.parts.push(chunk.subarray(from, nl + 1));
        blocks.push(Buffer.concat(this.parts, this.pending + (nl + 1 - from)));
        this.parts = [];
        this.pending = 0;
        blockStart = nl + 1;
      }
      from = nl + 1;
    }
  }

  /** Keeps a piece of the unfinished line: a small one copied into the spare buffer, a large one as it is. */
  private hold(piece: Buffer): void {
    this.pending += piece.length;
    if (piece.length >= SMALL_PIECE_BYTES) {
      this.flushSpare();
      this.parts.push(piece);
      return;
    }
    if (this.spare !== undefined && this.spareUsed + piece.length > this.spare.length) this.flushSpare();
    this.spare ??= Buffer.allocUnsafe(SPARE_BYTES);
    this.spareUsed += piece.copy(this.spare, this.spareUsed);
  }

  /**
   * Puts what the spare buffer holds in `parts` (in order; copied out at its exact size unless it
   * is nearly full, or `kept` is false: the line ends now), and lets the buffer go. The copy is a
   * buffer of its own, not a slice of Node's shared 8 KiB pool (`Buffer.from` of under 4 KiB is
   * one): a byte kept there kept the whole pool, and with other allocations between reads a line
   * cost ~3 bytes a byte.
   */
  private flushSpare(kept = true): void {
    if (this.spare === undefined) return;
    const used = this.spare.subarray(0, this.spareUsed);
    if (!kept || this.spareUsed >= SPARE_KEPT_BYTES) this.parts.push(used);
    else if (this.spareUsed > 0) {
      const copy = Buffer.allocUnsafeSlow(this.spareUsed);
      used.copy(copy);
      this.parts.push(copy);
    }
    this.spare = undefined;
    this.spareUsed = 0;
  }

  /** Bytes of an unfinished line still held (at most `maxBytes`). */
  get buffered(): number {
    return this.pending;
  }
}
