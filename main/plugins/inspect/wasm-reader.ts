import { PluginLoadError } from '../errors.js';

/**
 * A bounds-checked cursor over WebAssembly binary bytes (core modules and components share the
 * encoding: LEB128 integers, length-prefixed names, length-prefixed sections). Every read past
 * the end throws `PluginLoadError`: the bytes are the plugin's, so they are hostile.
 */
export class WasmReader {
  pos: number;
  readonly end: number;

  constructor(
    readonly bytes: Uint8Array,
    private readonly what: string,
    start = 0,
    end = bytes.length,
  ) {
    this.pos = start;
    this.end = end;
  }

  done(): boolean {
    return this.pos >= this.end;
  }

  byte(): number {
    if (this.pos >= this.end) throw this.error('truncated');
    return this.bytes[this.pos++]!;
  }

  u32le(): number {
    return (this.byte() | (this.byte() << 8) | (this.byte() << 16) | (this.byte() << 24)) >>> 0;
  }

  /** Unsigned LEB128 up to 2^53 (memory64 limits included). */
  leb(): number {
    let result = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
      scale *= 128;
      if (scale > 2 ** 56) throw this.error('LEB128 too long');
    }
  }

  /** Signed LEB128 (s33 type indices, block types): only its length matters to us. */
  sleb(): number {
    let result = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      scale *= 128;
      if ((b & 0x80) === 0) return b & 0x40 ? result - scale : result;
      if (scale > 2 ** 56) throw this.error('LEB128 too long');
    }
  }

  /** A length-prefixed name's raw bytes (checked by the caller: they may not be UTF-8). */
  name(): Uint8Array {
    const len = this.leb();
    return this.take(len);
  }

  take(len: number): Uint8Array {
    if (len > this.end - this.pos) throw this.error(`a ${len}-byte field runs past the end`);
    const out = this.bytes.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }

  /** A vector: its count, refused when it could not possibly fit in the bytes left. */
  count(): number {
    const n = this.leb();
    if (n > this.end - this.pos) throw this.error(`a vector of ${n} entries in ${this.end - this.pos} bytes`);
    return n;
  }

  /** The next section's id and the reader over its body; the cursor moves past it. */
  section(): { id: number; body: WasmReader; start: number; end: number } {
    const start = this.pos;
    const id = this.byte();
    const size = this.leb();
    if (size > this.end - this.pos) throw this.error(`section ${id} runs past the end`);
    const body = new WasmReader(this.bytes, this.what, this.pos, this.pos + size);
    this.pos += size;
    return { id, body, start, end: this.pos };
  }

  error(message: string): PluginLoadError {
    return new PluginLoadError(`${this.what}: ${message} (at byte ${this.pos})`);
  }
}

export function encodeLeb(value: number): number[] {
  const out: number[] = [];
  let v = value;
  do {
    let b = v % 128;
    v = Math.floor(v / 128);
    if (v > 0) b |= 0x80;
    out.push(b);
  } while (v > 0);
  return out;
}

export const WASM_MAGIC = 0x6d736100;
/** Core modules: version 1, layer 0. Components: version 0x0d, layer 1 (as a little-endian u32). */
export const CORE_VERSION = 0x00000001;
export const COMPONENT_VERSION = 0x0001000d;

/** Skips a core value type: one byte, or a reference type (`0x63`/`0x64` and a heap type). */
export function skipValType(r: WasmReader): void {
  const b = r.byte();
  if (b === 0x63 || b === 0x64) r.sleb();
}

/** Skips a memory's or table's limits (flags, min, max when flagged, a custom page size). */
export function skipLimits(r: WasmReader): void {
  const flags = r.byte();
  r.leb();
  if (flags & 0x01) r.leb();
  if (flags & 0x08) r.leb();
}
