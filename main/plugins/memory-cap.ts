import { PluginLoadError } from './errors.js';

/**
 * Bounds every linear memory a core module defines or imports by rewriting its limits before
 * compilation: `max = min(declared max, cap)`. `memory.grow` past the cap then returns -1 inside
 * the guest, so the host never backs more than `capPages` pages per memory (worker
 * `resourceLimits` only bound the JS heap, not WebAssembly memory).
 *
 * Only the memory section (5) and memory imports in the import section (2) are touched; every
 * other byte is copied as is. A module whose initial size is already over the cap is refused.
 */
export function capModuleMemory(bytes: Uint8Array, capPages: number, what = 'core module'): Uint8Array {
  const r = new Reader(bytes);
  if (bytes.length < 8 || r.u32le() !== 0x6d736100) throw new PluginLoadError(`${what}: not a WebAssembly module`);
  const version = r.u32le();
  if (version !== 1) throw new PluginLoadError(`${what}: unsupported WebAssembly version ${version}`);
  const out: Uint8Array[] = [bytes.subarray(0, 8)];
  let changed = false;
  while (!r.done()) {
    const sectionStart = r.pos;
    const id = r.byte();
    const size = r.leb();
    const start = r.pos;
    const end = start + size;
    if (end > bytes.length) throw new PluginLoadError(`${what}: section ${id} runs past the end`);
    let body: number[] | undefined;
    if (id === 5) body = rewriteMemorySection(bytes.subarray(start, end), capPages, what);
    else if (id === 2) body = rewriteImportSection(bytes.subarray(start, end), capPages, what);
    if (body) {
      changed = true;
      out.push(Uint8Array.from([id, ...encodeLeb(body.length), ...body]));
    } else {
      out.push(bytes.subarray(sectionStart, end));
    }
    r.pos = end;
  }
  if (!changed) return bytes;
  const total = out.reduce((n, part) => n + part.length, 0);
  const result = new Uint8Array(total);
  let at = 0;
  for (const part of out) {
    result.set(part, at);
    at += part.length;
  }
  return result;
}

function rewriteMemorySection(section: Uint8Array, capPages: number, what: string): number[] {
  const r = new Reader(section);
  const count = r.leb();
  const out = [...encodeLeb(count)];
  for (let i = 0; i < count; i++) out.push(...capLimits(r, capPages, what));
  return out;
}

function rewriteImportSection(section: Uint8Array, capPages: number, what: string): number[] | undefined {
  const r = new Reader(section);
  const count = r.leb();
  const out = [...encodeLeb(count)];
  let sawMemory = false;
  for (let i = 0; i < count; i++) {
    const from = r.pos;
    r.skipName();
    r.skipName();
    const kind = r.byte();
    out.push(...section.subarray(from, r.pos));
    switch (kind) {
      case 0x00: // func: typeidx
        out.push(...encodeLeb(r.leb()));
        break;
      case 0x01: { // table: reftype + limits
        const t = r.pos;
        r.byte();
        skipLimits(r);
        out.push(...section.subarray(t, r.pos));
        break;
      }
      case 0x02: // memory
        sawMemory = true;
        out.push(...capLimits(r, capPages, what));
        break;
      case 0x03: { // global: valtype + mut
        const g = r.pos;
        r.byte();
        r.byte();
        out.push(...section.subarray(g, r.pos));
        break;
      }
      case 0x04: { // tag: attribute + typeidx
        const g = r.pos;
        r.byte();
        r.leb();
        out.push(...section.subarray(g, r.pos));
        break;
      }
      default:
        throw new PluginLoadError(`${what}: unknown import kind ${kind}`);
    }
  }
  return sawMemory ? out : undefined;
}

/** Reads a memory type's limits and writes them back with `max = min(max, cap)`. */
function capLimits(r: Reader, capPages: number, what: string): number[] {
  const flags = r.byte();
  if (flags > 0x07) throw new PluginLoadError(`${what}: unsupported memory limits flags 0x${flags.toString(16)}`);
  const min = r.leb();
  const max = flags & 0x01 ? r.leb() : Infinity;
  if (min > capPages) {
    throw new PluginLoadError(`${what}: its memory starts at ${min} pages, over the cap of ${capPages} pages (max_memory_mb)`);
  }
  return [flags | 0x01, ...encodeLeb(min), ...encodeLeb(Math.min(max, capPages))];
}

function skipLimits(r: Reader): void {
  const flags = r.byte();
  r.leb();
  if (flags & 0x01) r.leb();
}

class Reader {
  pos = 0;
  constructor(private readonly bytes: Uint8Array) {}
  done(): boolean {
    return this.pos >= this.bytes.length;
  }
  byte(): number {
    if (this.pos >= this.bytes.length) throw new PluginLoadError('core module: truncated');
    return this.bytes[this.pos++]!;
  }
  u32le(): number {
    const v = (this.byte() | (this.byte() << 8) | (this.byte() << 16) | (this.byte() << 24)) >>> 0;
    return v;
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
      if (scale > 2 ** 56) throw new PluginLoadError('core module: LEB128 too long');
    }
  }
  skipName(): void {
    const len = this.leb();
    this.pos += len;
  }
}

function encodeLeb(value: number): number[] {
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
