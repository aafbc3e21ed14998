/** The least a body being joined allocates at once (so a trickle of tiny chunks is not a copy each). */
const FIRST_CAPACITY = 16 * 1024;

/**
 * What a chunk held as its own Buffer costs beyond its bytes: the Buffer object, its slot, the view
 * of the socket read it came in (~190 bytes measured). Counting it is what makes a body of 1-byte
 * chunks cost in the ledger what it costs the process.
 */
export const HELD_CHUNK_COST = 256;

/**
 * A body joined as it comes into one buffer that grows by doubling, up to `limit` (its declared
 * length, else its cap): one Buffer whatever the chunks were, so what it holds is its `capacity`,
 * which is what the ledger counts. A body that comes in one chunk (most do) is that chunk, not a copy.
 */
export class GrowingBody {
  private single: Buffer | undefined;
  private joined: Buffer | undefined;
  private size = 0;

  constructor(private readonly limit: number) {}

  /** Bytes received. */
  get length(): number {
    return this.size;
  }

  /** What holding the body costs now. */
  get capacity(): number {
    return this.joined?.length ?? (this.single === undefined ? 0 : this.single.length + HELD_CHUNK_COST);
  }

  /** What holding the body will cost once `chunk` is added (ask the ledger for it first). */
  capacityWith(chunk: Buffer): number {
    if (this.single === undefined && this.joined === undefined) return chunk.length + HELD_CHUNK_COST;
    const needed = this.size + chunk.length;
    const current = this.joined?.length ?? 0;
    if (needed <= current) return current;
    return Math.max(needed, Math.min(this.limit, Math.max(FIRST_CAPACITY, current * 2)));
  }

  add(chunk: Buffer): void {
    if (this.single === undefined && this.joined === undefined) {
      this.single = chunk;
      this.size = chunk.length;
      return;
    }
    const capacity = this.capacityWith(chunk);
    if (this.joined === undefined || capacity > this.joined.length) {
      const grown = Buffer.allocUnsafe(capacity);
      if (this.joined !== undefined) this.joined.copy(grown, 0, 0, this.size);
      else this.single!.copy(grown, 0);
      this.joined = grown;
      this.single = undefined;
    }
    chunk.copy(this.joined, this.size);
    this.size += chunk.length;
  }

  /** The body's bytes (a view of the joined buffer, not a copy). */
  bytes(): Buffer {
    return this.single ?? this.joined?.subarray(0, this.size) ?? Buffer.alloc(0);
  }

  /** Drops what it holds. */
  clear(): void {
    this.single = undefined;
    this.joined = undefined;
    this.size = 0;
  }
}
