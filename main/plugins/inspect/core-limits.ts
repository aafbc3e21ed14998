import { PluginLoadError } from '../errors.js';
import { CORE_VERSION, WASM_MAGIC, WasmReader, encodeLeb, skipValType } from './wasm-reader.js';

/** What one core module defines (not imports): each instance of it creates this many. */
export interface CoreModuleShape {
  memories: number;
  tables: number;
}

/** The most a memory or table of one instance may reach, after the plugin's budget is divided. */
export interface CoreCaps {
  /** WebAssembly pages (64 KiB) per memory. */
  memoryPages: number;
  /** Entries per table. */
  tableEntries: number;
}

/**
 * Counts the memories and tables a core module defines, and refuses what the sandbox does not
 * run: a type section with anything but function types (GC structs and arrays live on the
 * worker's JS heap, outside every linear-memory cap) and tables with initialiser expressions.
 */
export function shapeOfCoreModule(bytes: Uint8Array, what = 'core module'): CoreModuleShape {
  const shape: CoreModuleShape = { memories: 0, tables: 0 };
  const r = header(bytes, what);
  while (!r.done()) {
    const { id, body } = r.section();
    if (id === 1) checkTypes(body);
    else if (id === 4) shape.tables += body.count();
    else if (id === 5) shape.memories += body.count();
  }
  return shape;
}

/**
 * Bounds every memory and table a core module defines or imports by rewriting their limits before
 * compilation: `max = min(declared max, cap)`. `memory.grow` and `table.grow` past the cap then
 * fail inside the guest (-1), so the host never backs more than the cap (worker `resourceLimits`
 * bound the JS heap only, and a table's entries are allocated there: an unbounded `table.grow`
 * can end the whole process, not just the worker). A module whose initial size is already over
 * a cap is refused. Every other byte is copied as is.
 */
export function capCoreModule(bytes: Uint8Array, caps: CoreCaps, what = 'core module'): Uint8Array {
  const r = header(bytes, what);
  const out: Uint8Array[] = [bytes.subarray(0, 8)];
  let changed = false;
  while (!r.done()) {
    const { id, body, start, end } = r.section();
    let rewritten: number[] | undefined;
    if (id === 1) checkTypes(body);
    else if (id === 2) rewritten = rewriteImports(body, caps);
    else if (id === 4) rewritten = rewriteVector(body, (b) => capTable(b, caps.tableEntries));
    else if (id === 5) rewritten = rewriteVector(body, (b) => capLimits(b, caps.memoryPages, 'memory', 'pages (max_memory_mb)'));
    if (rewritten) {
      changed = true;
      out.push(Uint8Array.from([id, ...encodeLeb(rewritten.length), ...rewritten]));
    } else {
      out.push(bytes.subarray(start, end));
    }
  }
  if (!changed) return bytes;
  const result = new Uint8Array(out.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of out) {
    result.set(part, at);
    at += part.length;
  }
  return result;
}

function header(bytes: Uint8Array, what: string): WasmReader {
  const r = new WasmReader(bytes, what);
  if (bytes.length < 8 || r.u32le() !== WASM_MAGIC) throw new PluginLoadError(`${what}: not a WebAssembly module`);
  const version = r.u32le();
  if (version !== CORE_VERSION) throw new PluginLoadError(`${what}: unsupported WebAssembly version ${version}`);
  return r;
}

/** Function types only: 0x60 params results. */
function checkTypes(r: WasmReader): void {
  for (let n = r.count(), i = 0; i < n; i++) {
    const form = r.byte();
    if (form !== 0x60) {
      throw r.error(`type form 0x${form.toString(16)} (a GC or recursive type) is not accepted: only function types`);
    }
    for (let k = 0; k < 2; k++) for (let m = r.count(), j = 0; j < m; j++) skipValType(r);
  }
}

function rewriteVector(r: WasmReader, item: (r: WasmReader) => number[]): number[] {
  const n = r.count();
  const out = [...encodeLeb(n)];
  for (let i = 0; i < n; i++) out.push(...item(r));
  if (!r.done()) throw r.error('trailing bytes after the last entry');
  return out;
}

function rewriteImports(r: WasmReader, caps: CoreCaps): number[] | undefined {
  const n = r.count();
  const out = [...encodeLeb(n)];
  let touched = false;
  for (let i = 0; i < n; i++) {
    const from = r.pos;
    r.name();
    r.name();
    const kind = r.byte();
    out.push(...r.bytes.subarray(from, r.pos));
    switch (kind) {
      case 0x00: // func: typeidx
        out.push(...encodeLeb(r.leb()));
        break;
      case 0x01: // table
        touched = true;
        out.push(...capTable(r, caps.tableEntries));
        break;
      case 0x02: // memory
        touched = true;
        out.push(...capLimits(r, caps.memoryPages, 'memory', 'pages (max_memory_mb)'));
        break;
      case 0x03: { // global: valtype + mut
        const g = r.pos;
        skipValType(r);
        r.byte();
        out.push(...r.bytes.subarray(g, r.pos));
        break;
      }
      case 0x04: { // tag: attribute + typeidx
        const g = r.pos;
        r.byte();
        r.leb();
        out.push(...r.bytes.subarray(g, r.pos));
        break;
      }
      default:
        throw r.error(`unknown import kind ${kind}`);
    }
  }
  if (!r.done()) throw r.error('trailing bytes after the last import');
  return touched ? out : undefined;
}

/** tabletype: reftype limits (a 0x40-prefixed table with an initialiser is refused). */
function capTable(r: WasmReader, cap: number): number[] {
  const first = r.pos;
  const b = r.byte();
  if (b === 0x40) throw r.error('tables with initialiser expressions are not accepted');
  if (b === 0x63 || b === 0x64) r.sleb();
  const refType = [...r.bytes.subarray(first, r.pos)];
  return [...refType, ...capLimits(r, cap, 'table', 'entries')];
}

/** Reads limits and writes them back with `max = min(max, cap)`. */
function capLimits(r: WasmReader, cap: number, what: string, unit: string): number[] {
  const flags = r.byte();
  if (flags > 0x07) throw r.error(`unsupported ${what} limits flags 0x${flags.toString(16)}`);
  const min = r.leb();
  const max = flags & 0x01 ? r.leb() : Infinity;
  if (min > cap) throw r.error(`a ${what} starts at ${min} ${unit}, over this plugin's cap of ${cap}`);
  return [flags | 0x01, ...encodeLeb(min), ...encodeLeb(Math.min(max, cap))];
}
