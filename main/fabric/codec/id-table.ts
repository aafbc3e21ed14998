/**
 * What a connection has in flight, by request id (a wire id: a non-negative safe integer). A `Map`
 * would do, but a connection's tables live as long as it does, so V8 keeps their hash tables in
 * the old generation, and a call that adds one id and removes it again makes the `Map` rehash
 * into a fresh table there (it shrinks once empty, grows again on the next call, and compacts its
 * deleted entries): old-generation garbage every call, which only a full collection reclaims. Here
 * the slots are reused: open addressing with linear probing and backward-shift deletion, grown
 * (doubled) when half full and never shrunk, so a steady flow of calls allocates nothing.
 *
 * A peer chooses its own ids, so it can make them collide: a probe then walks at most every id in
 * flight, which the call gate bounds for the peer's requests.
 */
export interface ReadonlyIdTable<V> {
  readonly size: number;
  has(id: number): boolean;
  get(id: number): V | undefined;
}

const EMPTY = -1;
const INITIAL_SLOTS = 16;

export class IdTable<V> implements ReadonlyIdTable<V> {
  private keys: number[] = new Array<number>(INITIAL_SLOTS).fill(EMPTY);
  private values: (V | undefined)[] = new Array<V | undefined>(INITIAL_SLOTS).fill(undefined);
  private mask = INITIAL_SLOTS - 1;
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(id: number): boolean {
    return this.keys[this.slot(id)] === id;
  }

  get(id: number): V | undefined {
    const at = this.slot(id);
    return this.keys[at] === id ? this.values[at] : undefined;
  }

  set(id: number, value: V): void {
    let at = this.slot(id);
    if (this.keys[at] !== id) {
      if ((this.count + 1) * 2 > this.keys.length) {
        this.grow();
        at = this.slot(id);
      }
      this.keys[at] = id;
      this.count++;
    }
    this.values[at] = value;
  }

  /** Removes `id`; says whether it was there. */
  delete(id: number): boolean {
    let at = this.slot(id);
    if (this.keys[at] !== id) return false;
    this.count--;
    // Backward-shift: move up every later entry of the probe run that may fill the hole, so a
    // lookup never meets an empty slot before its key (no tombstones).
    for (let next = (at + 1) & this.mask; ; next = (next + 1) & this.mask) {
      const key = this.keys[next]!;
      if (key === EMPTY) break;
      const home = key & this.mask;
      // `key` may move to `at` unless its home lies cyclically in (at, next].
      if (((next - home) & this.mask) >= ((next - at) & this.mask)) {
        this.keys[at] = key;
        this.values[at] = this.values[next];
        at = next;
      }
    }
    this.keys[at] = EMPTY;
    this.values[at] = undefined;
    return true;
  }

  /** The values, in ascending order of their ids (the order they were added in, for ids counted up). */
  sortedValues(): V[] {
    const ids: number[] = [];
    for (const key of this.keys) if (key !== EMPTY) ids.push(key);
    return ids.sort((a, b) => a - b).map((id) => this.get(id)!);
  }

  clear(): void {
    this.keys.fill(EMPTY);
    this.values.fill(undefined);
    this.count = 0;
  }

  /** Where `id` is, or the empty slot where it would go. */
  private slot(id: number): number {
    let at = id & this.mask;
    for (;;) {
      const key = this.keys[at];
      if (key === id || key === EMPTY) return at;
      at = (at + 1) & this.mask;
    }
  }

  private grow(): void {
    const { keys, values } = this;
    this.keys = new Array<number>(keys.length * 2).fill(EMPTY);
    this.values = new Array<V | undefined>(keys.length * 2).fill(undefined);
    this.mask = this.keys.length - 1;
    for (let at = 0; at < keys.length; at++) {
      const key = keys[at]!;
      if (key === EMPTY) continue;
      const to = this.slot(key);
      this.keys[to] = key;
      this.values[to] = values[at];
    }
  }
}
