/**
 * Property-based fuzzing of the plugin load path, shared by the test suite (a short run) and
 * `npm run fuzz:plugins` (as long as you like). Mutated fixture components, random bytes behind a
 * component header, odd `module.toml` texts, core modules from a small WAT grammar and WIT worlds
 * of odd types are loaded through the public `ModuleRegistry` API (`loadModule` or
 * `scanDirectory`). Each load must settle within the registry's own limits, as served or refused
 * (`PluginLoadError` with a message, or a report failure with a reason); whatever loaded must
 * answer calls or fail them with `PluginCallError`, and unload; no worker thread may be left
 * behind; a sentinel module loaded before the runs must answer exactly as before; and a fresh
 * valid module must still load after each run.
 *
 * Inputs are recipes (a fixture kind and a list of mutations, manifest keys to replace…), not raw
 * bytes, so fast-check's counterexample is short, shrinks well, and `componentBytes` turns it back
 * into the bytes.
 */
import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { componentEmbed, componentNew, parse } from '@bytecodealliance/jco-transpile/wasm-tools';
import fc from 'fast-check';
import { ModuleRegistry, PluginCallError, PluginLoadError, limits, type ModuleHandle } from '../../main/plugins/index.js';
import { FIXTURE_KINDS, buildFixture, fixtureManifest, type FixtureKind } from '../helpers/wasm-fixtures.js';

// ---------------------------------------------------------------------------------------------
// Time bounds, from the registry's own limits: a load or call past these never settled.

/** The toolchain's transpile limit (`TOOLCHAIN_TIMEOUT_MS` in component-cache.ts, not exported). */
export const TRANSPILE_LIMIT_MS = 120_000;
/** Room for what has no timer of its own (reading files, compiling core modules on the main thread). */
export const SLACK_MS = 10_000;
/** A load: one transpile, then one instantiation. */
export const LOAD_BOUND_MS = TRANSPILE_LIMIT_MS + limits.INSTANTIATE_TIMEOUT_MS + SLACK_MS;
/** Tool calls on fuzzed modules run under this ceiling, so a spinning guest costs 2 s, not 60. */
export const FUZZ_EXECUTION_MS = 2_000;
/** A call: possibly a fresh instance first (after a timeout or crash), then the call itself. */
const callBound = (callMs: number): number => limits.INSTANTIATE_TIMEOUT_MS + callMs + SLACK_MS;

export class Unsettled extends Error {
  override readonly name = 'Unsettled';
}

/** `work`, or an `Unsettled` rejection once `ms` pass (a bound, not a sleep: it ends with the work). */
export function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Unsettled(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([work, bound]).finally(() => clearTimeout(timer));
}

/** `arb` one time in `oneIn`, else null. */
const rarely = <T>(arb: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });

// ---------------------------------------------------------------------------------------------
// The wasm / component binary: magic, version, then sections (id:u8, size:LEB128 u32, body).

const MAGIC = [0x00, 0x61, 0x73, 0x6d];
export const COMPONENT_HEADER = Uint8Array.from([...MAGIC, 0x0d, 0x00, 0x01, 0x00]);

interface Section {
  id: number;
  /** Offset of the id byte, of the size field, of the body, and the end. */
  start: number;
  sizeAt: number;
  bodyAt: number;
  end: number;
}

function readLeb(bytes: Uint8Array, at: number): { value: number; next: number } | undefined {
  let value = 0;
  let scale = 1;
  for (let i = at; i < bytes.length && i < at + 10; i++) {
    const b = bytes[i]!;
    value += (b & 0x7f) * scale;
    if ((b & 0x80) === 0) return { value, next: i + 1 };
    scale *= 128;
  }
  return undefined;
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

/** The sections of a module or component, read leniently: stops at the first malformed one. */
function sectionsOf(bytes: Uint8Array): Section[] {
  const out: Section[] = [];
  let at = 8;
  while (at < bytes.length) {
    const size = readLeb(bytes, at + 1);
    if (!size || size.next + size.value > bytes.length) break;
    out.push({ id: bytes[at]!, start: at, sizeAt: at + 1, bodyAt: size.next, end: size.next + size.value });
    at = size.next + size.value;
  }
  return out;
}

const hasMagic = (bytes: Uint8Array): boolean => bytes.length >= 8 && MAGIC.every((b, i) => bytes[i] === b);

function concat(parts: readonly (Uint8Array | readonly number[])[]): Uint8Array {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Replaces one section's body and re-encodes its size (or keeps the old size field, inconsistent). */
function withBody(bytes: Uint8Array, s: Section, body: Uint8Array, fixSize = true): Uint8Array {
  const size = fixSize ? encodeLeb(body.length) : bytes.subarray(s.sizeAt, s.bodyAt);
  return concat([bytes.subarray(0, s.start), [s.id], size, body, bytes.subarray(s.end)]);
}

/** Huge or wrong LEB128 values for a size or count field. */
export const HUGE_LEBS = ['u32-max', 'i32-max', '2^31', '2^32', 'u64-max', 'past-end', 'zero', 'overlong'] as const;
export type HugeLeb = (typeof HUGE_LEBS)[number];

function hugeLeb(kind: HugeLeb, original: number, remaining: number): number[] {
  switch (kind) {
    case 'u32-max':
      return [0xff, 0xff, 0xff, 0xff, 0x0f];
    case 'i32-max':
      return [0xff, 0xff, 0xff, 0xff, 0x07];
    case '2^31':
      return [0x80, 0x80, 0x80, 0x80, 0x08];
    case '2^32':
      return [0x80, 0x80, 0x80, 0x80, 0x10]; // past u32: a valid LEB, an invalid size
    case 'u64-max':
      return [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
    case 'past-end':
      return encodeLeb(remaining + 1);
    case 'zero':
      return [0x00];
    case 'overlong': {
      // The same value, padded to 5 bytes (legal in wasm), so offsets shift without a new value.
      const out = encodeLeb(original);
      while (out.length < 5) {
        out[out.length - 1]! |= 0x80;
        out.push(0x00);
      }
      return out;
    }
  }
}

export type Mutation =
  | { op: 'flip'; at: number; bit: number }
  /** A bit flip inside one section's body (of a nested module's when `inner` is set): data, names, code. */
  | { op: 'flip-in'; section: number; inner: number | null; at: number; bit: number }
  | { op: 'overwrite'; at: number; bytes: number[] }
  | { op: 'insert'; at: number; bytes: number[] }
  | { op: 'delete'; at: number; count: number }
  | { op: 'truncate'; at: number }
  | { op: 'duplicate-section'; section: number }
  | { op: 'swap-sections'; a: number; b: number }
  | { op: 'drop-section'; section: number }
  | { op: 'graft-section'; from: FixtureKind; section: number; at: number }
  /** Rewrites a section's size field; `inner` picks a section of a nested module/component instead. */
  | { op: 'huge-size'; section: number; inner: number | null; value: HugeLeb; fixOuter: boolean }
  /** Rewrites the first LEB of a section's body (the vector count of most sections). */
  | { op: 'huge-count'; section: number; inner: number | null; value: HugeLeb };

/** A section picked by index modulo the count, so recipes stay meaningful as bytes change. */
function pick<T>(items: readonly T[], index: number): T | undefined {
  return items.length === 0 ? undefined : items[index % items.length];
}

/** Applies `edit` to the top-level section, or to section `inner` of the module/component nested in it. */
function editSection(
  bytes: Uint8Array,
  section: number,
  inner: number | null,
  edit: (bytes: Uint8Array, s: Section) => Uint8Array,
  fixOuter = true,
): Uint8Array {
  const outer = pick(sectionsOf(bytes), section);
  if (!outer) return bytes;
  if (inner === null) return edit(bytes, outer);
  const body = bytes.subarray(outer.bodyAt, outer.end);
  if (!hasMagic(body)) return edit(bytes, outer);
  const target = pick(sectionsOf(body), inner);
  if (!target) return bytes;
  return withBody(bytes, outer, edit(body, target), fixOuter);
}

export async function applyMutation(bytes: Uint8Array, m: Mutation): Promise<Uint8Array> {
  const at = (n: number, extra = 0): number => n % (bytes.length + extra);
  switch (m.op) {
    case 'flip': {
      if (bytes.length === 0) return bytes;
      const out = Uint8Array.from(bytes);
      out[at(m.at)]! ^= 1 << (m.bit & 7);
      return out;
    }
    case 'flip-in':
      return editSection(bytes, m.section, m.inner, (b, s) => {
        if (s.end === s.bodyAt) return b;
        const out = Uint8Array.from(b);
        out[s.bodyAt + (m.at % (s.end - s.bodyAt))]! ^= 1 << (m.bit & 7);
        return out;
      });
    case 'overwrite': {
      const out = Uint8Array.from(bytes);
      const from = at(m.at, 1);
      m.bytes.forEach((b, i) => {
        if (from + i < out.length) out[from + i] = b;
      });
      return out;
    }
    case 'insert': {
      const from = at(m.at, 1);
      return concat([bytes.subarray(0, from), m.bytes, bytes.subarray(from)]);
    }
    case 'delete': {
      const from = at(m.at, 1);
      return concat([bytes.subarray(0, from), bytes.subarray(from + m.count)]);
    }
    case 'truncate':
      return bytes.subarray(0, at(m.at, 1));
    case 'duplicate-section': {
      const s = pick(sectionsOf(bytes), m.section);
      return s ? concat([bytes.subarray(0, s.end), bytes.subarray(s.start, s.end), bytes.subarray(s.end)]) : bytes;
    }
    case 'swap-sections': {
      const all = sectionsOf(bytes);
      const a = pick(all, m.a);
      const b = pick(all, m.b);
      if (!a || !b || a === b) return bytes;
      const [x, y] = a.start < b.start ? [a, b] : [b, a];
      return concat([bytes.subarray(0, x.start), bytes.subarray(y.start, y.end), bytes.subarray(x.end, y.start), bytes.subarray(x.start, x.end), bytes.subarray(y.end)]);
    }
    case 'drop-section': {
      const s = pick(sectionsOf(bytes), m.section);
      return s ? concat([bytes.subarray(0, s.start), bytes.subarray(s.end)]) : bytes;
    }
    case 'graft-section': {
      const donor = await buildFixture(m.from);
      const s = pick(sectionsOf(donor), m.section);
      const into = sectionsOf(bytes);
      const before = pick(into, m.at);
      if (!s) return bytes;
      const where = before ? before.start : bytes.length;
      return concat([bytes.subarray(0, where), donor.subarray(s.start, s.end), bytes.subarray(where)]);
    }
    case 'huge-size':
      return editSection(
        bytes,
        m.section,
        m.inner,
        (b, s) => {
          const original = s.end - s.bodyAt;
          return concat([b.subarray(0, s.sizeAt), hugeLeb(m.value, original, b.length - s.bodyAt), b.subarray(s.bodyAt)]);
        },
        m.fixOuter,
      );
    case 'huge-count':
      return editSection(bytes, m.section, m.inner, (b, s) => {
        const count = readLeb(b, s.bodyAt);
        if (!count || count.next > s.end) return b;
        const body = concat([hugeLeb(m.value, count.value, s.end - count.next), b.subarray(count.next, s.end)]);
        return withBody(b, s, body);
      });
  }
}

const byte = fc.integer({ min: 0, max: 255 });
const someBytes = fc.array(byte, { minLength: 1, maxLength: 8 });
const position = fc.nat({ max: 1 << 20 });
const sectionIndex = fc.nat({ max: 64 });
const hugeValue = fc.constantFrom(...HUGE_LEBS);

export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('flip' as const), at: position, bit: fc.nat({ max: 7 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constant('flip-in' as const), section: sectionIndex, inner: fc.option(sectionIndex, { freq: 4 }), at: position, bit: fc.nat({ max: 7 }) }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('overwrite' as const), at: position, bytes: someBytes }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('insert' as const), at: position, bytes: someBytes }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), at: position, count: fc.integer({ min: 1, max: 64 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('truncate' as const), at: position }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('duplicate-section' as const), section: sectionIndex }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('swap-sections' as const), a: sectionIndex, b: sectionIndex }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('drop-section' as const), section: sectionIndex }) },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('graft-section' as const), from: fc.constantFrom(...FIXTURE_KINDS), section: sectionIndex, at: sectionIndex }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('huge-size' as const),
      section: sectionIndex,
      inner: fc.option(sectionIndex, { freq: 2 }),
      value: hugeValue,
      fixOuter: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('huge-count' as const), section: sectionIndex, inner: fc.option(sectionIndex, { freq: 2 }), value: hugeValue }),
  },
);

// ---------------------------------------------------------------------------------------------
// Core modules from a small WAT grammar, wrapped as plugin components with the real WIT.

const IFACE = 'chatty:plugin/plugin@0.3.0';

export interface WatRecipe {
  memory: { min: number; max: number | null; shared: boolean; i64: boolean };
  /** Memories beyond the exported one (multi-memory). */
  extraMemories: number;
  tables: { min: number; max: number | null; ref: 'funcref' | 'externref'; exportAs: string | null }[];
  /** Odd names an extra function is exported under. */
  exports: string[];
  globals: number;
  start: 'none' | 'trap' | 'grow' | 'spin';
  data: { offset: number; size: number }[];
  /** false: the bare core module is the plugin file (never a component). */
  wrap: boolean;
}

/** A WAT string literal of `s`'s UTF-8 bytes, every byte escaped (names with NUL, quotes, any script). */
function watString(s: string): string {
  return `"${[...new TextEncoder().encode(s)].map((b) => `\\${b.toString(16).padStart(2, '0')}`).join('')}"`;
}

function watText(r: WatRecipe): string {
  const idx = r.memory.i64 ? 'i64 ' : '';
  const max = r.memory.max === null ? '' : ` ${r.memory.max}`;
  const mem = `(memory (export "memory") ${idx}${r.memory.min}${max}${r.memory.shared ? ' shared' : ''})`;
  const extraMem = Array.from({ length: r.extraMemories }, (_, i) => `(memory $extra${i} 1)`).join('\n  ');
  const tables = r.tables
    .map((t, i) => `(table $t${i} ${t.min}${t.max === null ? '' : ` ${t.max}`} ${t.ref})${t.exportAs === null ? '' : ` (export ${watString(t.exportAs)} (table $t${i}))`}`)
    .join('\n  ');
  const exports = r.exports.map((name) => `(export ${watString(name)} (func $nop))`).join('\n  ');
  const globals = Array.from({ length: r.globals }, (_, i) => `(global $g${i} (mut i32) (i32.const ${i}))`).join('\n  ');
  const start =
    r.start === 'none' ? ''
    : r.start === 'trap' ? '(func $start unreachable) (start $start)'
    : r.start === 'grow' ? '(func $start (loop $more (br_if $more (i32.ne (memory.grow (i32.const 256)) (i32.const -1))))) (start $start)'
    : '(func $start (loop $spin (br $spin))) (start $start)';
  const addr = (n: number): string => (r.memory.i64 ? `(i64.const ${n})` : `(i32.const ${n})`);
  const data = r.data.map((d) => `(data (memory 0) ${addr(d.offset)} "${'\\2a'.repeat(d.size)}")`).join('\n  ');
  const i32 = (n: number): string => (r.memory.i64 ? `(i64.const ${n})` : `(i32.const ${n})`);
  // metadata at 256: five (ptr, len) pairs, all strings "fuzz" at 16; list-tools at 320: empty.
  const words = (ws: number[]): string => ws.map((w) => [0, 8, 16, 24].map((s) => `\\${((w >>> s) & 0xff).toString(16).padStart(2, '0')}`).join('')).join('');
  return `(module
  ${mem}
  ${extraMem}
  ${tables}
  ${globals}
  (global $bump (mut i32) (i32.const 4096))
  (func $nop)
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (local $p i32)
    (local.set $p (global.get $bump)) (global.set $bump (i32.add (global.get $bump) (local.get 3))) (local.get $p))
  (func (export "${IFACE}#metadata") (result i32) (i32.const 256))
  (func (export "${IFACE}#list-tools") (result i32) (i32.const 320))
  (func (export "${IFACE}#invoke-tool") (param i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32)
    (i32.store8 ${i32(512)} (i32.const 0)) (i32.store ${i32(516)} (local.get 2)) (i32.store ${i32(520)} (local.get 3))
    (i32.store8 ${i32(524)} (i32.const 0)) (i32.const 512))
  ${exports}
  ${start}
  (data (memory 0) ${addr(16)} "fuzz")
  (data (memory 0) ${addr(256)} "${words([16, 4, 16, 4, 16, 4, 0, 0, 0, 0])}")
  (data (memory 0) ${addr(320)} "${words([0, 0])}")
  ${data}
)`;
}

const ODD_NAMES = ['', ' ', 'memory', 'memory2', 'cabi_realloc', 'cabi_post_x', '名前', '\u0000', '\ud7ff', 'a'.repeat(2000), `${IFACE}#metadata2`, `${IFACE}#unknown`, '_start', '_initialize'];

export function watArb(opts: { spin: boolean }): fc.Arbitrary<WatRecipe> {
  const pages = fc.constantFrom(0, 1, 17, 4096, 4097, 65536);
  return fc.record({
    memory: fc.record({
      min: fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: pages }),
      max: rarely(pages, 3),
      shared: fc.boolean(),
      i64: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    }),
    extraMemories: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) }),
    tables: fc.array(
      fc.record({
        min: fc.constantFrom(0, 1, 10, 65536, 1_000_000, 10_000_000, 10_000_001, 4294967295),
        max: rarely(fc.constantFrom(1, 10, 10_000_000, 4294967295), 3),
        ref: fc.constantFrom<'funcref' | 'externref'>('funcref', 'externref'),
        exportAs: rarely(fc.constantFrom(...ODD_NAMES), 3),
      }),
      { maxLength: 3 },
    ),
    exports: fc.array(fc.constantFrom(...ODD_NAMES), { maxLength: 3 }),
    globals: fc.constantFrom(0, 1, 100, 10_000),
    start: opts.spin ? fc.constantFrom<WatRecipe['start']>('none', 'none', 'trap', 'grow', 'spin') : fc.constantFrom<WatRecipe['start']>('none', 'none', 'trap', 'grow'),
    data: fc.array(fc.record({ offset: fc.constantFrom(1024, 65535, 65536, 4096 * 65536 - 1, 4294967295), size: fc.constantFrom(1, 2, 64) }), { maxLength: 2 }),
    wrap: fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  });
}

let witText: Promise<string> | undefined;

/** The recipe's bytes: a component when the toolchain takes the module, else the core module or the text. */
async function watBytes(r: WatRecipe): Promise<Uint8Array> {
  const text = watText(r);
  let core: Uint8Array;
  try {
    core = await parse(text);
  } catch {
    return new TextEncoder().encode(text); // not even a module: the text itself is a fine input
  }
  if (!r.wrap) return core;
  witText ??= readFile(new URL('../../main/plugins/wit/plugin.wit', import.meta.url), 'utf8');
  try {
    return await componentNew(await componentEmbed({ binary: core, witSource: await witText, world: 'plugin-world' }));
  } catch {
    return core;
  }
}

// ---------------------------------------------------------------------------------------------
// WIT worlds from a small grammar: the plugin world plus one interface of odd types (resources,
// async, streams and futures, wide flags and variants, many parameters), exported or imported.
// wit-component makes a dummy core module for it, so every world that parses becomes a component
// that reaches jco's transpile (imports are checked only after it).

export interface WitRecipe {
  direction: 'export' | 'import';
  funcs: { async: boolean; params: string[]; result: string | null }[];
  /** Sizes of the named types the functions may use: flags `fl`, variant `vr`, enum `en`. */
  flags: number;
  cases: number;
}

const PRIMITIVES = ['u8', 'u64', 's32', 'f32', 'f64', 'char', 'bool', 'string', 'own<r>', 'error-context', 'rec', 'fl', 'vr', 'en'];

const witType: fc.Arbitrary<string> = fc.letrec<{ type: string }>((tie) => ({
  type: fc.oneof(
    { maxDepth: 3, depthIdentifier: 'wit-type' },
    fc.constantFrom(...PRIMITIVES),
    tie('type').map((t) => `list<${t}>`),
    fc.tuple(tie('type'), fc.constantFrom(1, 17, 1000)).map(([t, n]) => `list<${t}, ${n}>`),
    tie('type').map((t) => `option<${t}>`),
    fc.tuple(tie('type'), tie('type')).map(([a, b]) => `result<${a}, ${b}>`),
    fc.array(tie('type'), { minLength: 1, maxLength: 4 }).map((ts) => `tuple<${ts.join(', ')}>`),
    tie('type').map((t) => `stream<${t}>`),
    tie('type').map((t) => `future<${t}>`),
  ),
})).type;

export const witArb: fc.Arbitrary<WitRecipe> = fc.record({
  direction: fc.constantFrom<WitRecipe['direction']>('export', 'import'),
  funcs: fc.array(
    fc.record({
      async: fc.boolean(),
      // `borrow` only as a parameter (WIT allows it nowhere else); 17 flattens past the 16 core parameters.
      params: fc.oneof(
        fc.array(fc.oneof({ weight: 6, arbitrary: witType }, { weight: 1, arbitrary: fc.constant('borrow<r>') }), { maxLength: 3 }),
        fc.constantFrom(17, 100).map((n) => Array.from({ length: n }, () => 'string')),
      ),
      result: fc.option(witType, { freq: 3 }),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  flags: fc.constantFrom(1, 8, 31, 32), // wasm-tools refuses more than 32
  cases: fc.constantFrom(1, 255, 256, 257),
});

function witSourceFor(r: WitRecipe, plugin: string): string {
  const names = (prefix: string, n: number): string => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(', ');
  const funcs = r.funcs.map((f, i) => {
    const params = f.params.map((t, j) => `a${j}: ${t}`).join(', ');
    return `fn${i}: ${f.async ? 'async ' : ''}func(${params})${f.result === null ? '' : ` -> ${f.result}`};`;
  });
  const iface = `interface x {
  resource r { constructor(); }
  record rec { a: u8, b: string }
  flags fl { ${names('g', r.flags)} }
  variant vr { ${names('c', r.cases).split(', ').map((c) => `${c}(u8)`).join(', ')} }
  enum en { ${names('e', r.cases)} }
  ${funcs.join('\n  ')}
}`;
  return plugin.replace('package chatty:plugin@0.3.0;', `package chatty:plugin@0.3.0;\n${iface}\nworld fuzz-world { include plugin-world; ${r.direction} x; }`);
}

/** The component, or the WIT text when the toolchain will not build it (a fine input too). */
async function witBytes(r: WitRecipe): Promise<Uint8Array> {
  witText ??= readFile(new URL('../../main/plugins/wit/plugin.wit', import.meta.url), 'utf8');
  const source = witSourceFor(r, await witText);
  try {
    // `dummy`: wit-component writes a core module that satisfies the world (the typings omit it).
    return await componentNew(await componentEmbed({ dummy: true, witSource: source, world: 'fuzz-world' } as Parameters<typeof componentEmbed>[0]));
  } catch {
    return new TextEncoder().encode(source);
  }
}

// ---------------------------------------------------------------------------------------------
// Component sources.

export type ComponentRecipe =
  | { from: 'fixture'; kind: FixtureKind; mutations: Mutation[] }
  /** The component header and then these bytes. */
  | { from: 'header'; rest: number[] }
  /** The component header and sections of random ids and bodies, sizes right or wrong. */
  | { from: 'sections'; sections: { id: number; size: number | null; body: number[] }[] }
  | { from: 'wat'; wat: WatRecipe }
  | { from: 'wit'; wit: WitRecipe };

const fixtureKind = fc.constantFrom(...FIXTURE_KINDS);

export const mutantArb: fc.Arbitrary<ComponentRecipe> = fc.record({
  from: fc.constant('fixture' as const),
  kind: fixtureKind,
  // Mostly one mutation: a single change is what keeps a component valid enough to go deep.
  mutations: fc.oneof({ weight: 3, arbitrary: fc.tuple(mutationArb) }, { weight: 1, arbitrary: fc.array(mutationArb, { minLength: 2, maxLength: 4 }) }),
});

export const headerArb: fc.Arbitrary<ComponentRecipe> = fc.oneof(
  fc.record({ from: fc.constant('header' as const), rest: fc.array(byte, { maxLength: 256 }) }),
  fc.record({
    from: fc.constant('sections' as const),
    sections: fc.array(
      fc.record({
        id: fc.oneof(fc.integer({ min: 0, max: 13 }), byte),
        size: fc.option(fc.oneof(fc.nat({ max: 300 }), fc.constant(0xffffffff)), { freq: 4 }),
        body: fc.array(byte, { maxLength: 64 }),
      }),
      { maxLength: 6 },
    ),
  }),
);

export async function componentBytes(r: ComponentRecipe): Promise<Uint8Array> {
  switch (r.from) {
    case 'fixture': {
      let bytes = await buildFixture(r.kind);
      for (const m of r.mutations) bytes = await applyMutation(bytes, m);
      return bytes;
    }
    case 'header':
      return concat([COMPONENT_HEADER, r.rest]);
    case 'sections':
      return concat([COMPONENT_HEADER, ...r.sections.map((s) => [s.id, ...encodeLeb(s.size ?? s.body.length), ...s.body])]);
    case 'wat':
      return watBytes(r.wat);
    case 'wit':
      return witBytes(r.wit);
  }
}

// ---------------------------------------------------------------------------------------------
// module.toml texts. `@NAME@` becomes the run's unique module name, `@ABS@` the absolute path of
// the run's plugin.wasm. The module directory holds a few odd entries for paths to reach:
// inside.wasm -> plugin.wasm, outside.wasm -> a component outside it, dangling.wasm, loop.wasm
// (a symlink to itself), dir.wasm/, fifo.wasm, empty.wasm, data/ and outside-dir -> a directory
// outside it.

const LONG = 'a'.repeat(5000);
const q = (s: string): string => JSON.stringify(s);

/** Values for each key of a manifest (TOML literals); `OMIT` leaves the key out. */
const OMIT = '(omit)';
const FIELDS = {
  name: ['"echo"', OMIT, '""', '".@NAME@"', '"@NAME@/x"', '"../@NAME@"', '"名@NAME@"', `"@NAME@${LONG}"`, '"@NAME@\\u0000"', '"@NAME@ "', '42', '["@NAME@"]', "'@NAME@'"],
  version: [OMIT, '""', q(LONG), '1', '"\\u202e1.0"', 'true', '1979-05-27T07:32:00Z'],
  description: [OMIT, q('x'.repeat(100_000)), '"\\ud83d\\ude00"', "'''a\nb'''", '1979-05-27', '{ a = 1 }', '"\\u0000"'],
  wasm: [
    OMIT, '"./plugin.wasm"', '"sub/../plugin.wasm"', '"../@NAME@/plugin.wasm"', '"@ABS@"', '"/dev/zero"', '"/proc/self/mem"', '"C:\\\\plugin.wasm"',
    '"plugin.wasm\\u0000"', '"inside.wasm"', '"outside.wasm"', '"dangling.wasm"', '"loop.wasm"', '"dir.wasm"', '"fifo.wasm"', '"empty.wasm"',
    '"module.toml"', '"."', '""', '"data/"', '"plugin.wasm/"', q(`${LONG}.wasm`), '"%2e%2e/plugin.wasm"', '"~/plugin.wasm"',
    '"outside-dir/plugin.wasm"', '"/"', '1', '["plugin.wasm"]',
  ],
  execution_mode: ['"local"', '"remote"', '"remote_only"', '"LOCAL"', '""', '1'],
  mcp: [OMIT, 'false', '"true"', '1'],
  a2a: ['true', 'false', '"true"', '1'],
  max_memory_mb: [
    '0', '1', '64', '256', '257', '4096', '65536', '2147483647', '4294967296', '9007199254740993', '9223372036854775807', '-1', '-0', '1.5',
    '1e308', 'inf', '-inf', 'nan', '"64"', '"NaN"', '0x10', '1_000',
  ],
  max_execution_ms: ['0', '1', '2000', '60001', '2147483648', '9223372036854775807', '-1', '0.5', 'inf', 'nan', '"100"'],
  config: [
    'greeting = "Hello"', '"" = "x"', 'n = 1', 't = { a = "b" }', `big = ${q('v'.repeat(100_000))}`, '"名" = "値"', 'a.b = "c"',
    Array.from({ length: 2000 }, (_, i) => `k${i} = "${i}"`).join('\n'),
  ],
  root: ['"data"', '"../data"', '"/tmp"', '"dangling.wasm"', '"plugin.wasm"', '"fifo.wasm"', '"."', '"data/../.."', '"outside-dir"', '"data\\u0000"', '"loop.wasm"', '""'],
  /** Text after the tables: unknown keys and tables, duplicated tables and keys. */
  extra: ['unknown = 1', '[extra]\nx = 1', '[[module]]\nname = "x"', '[module]\nname = "again"', '[resources]\nmax_memory_mb = 1\n[resources]\nmax_memory_mb = 2', 'name = "dup"', '[protocols]\nmcp = true'],
} as const satisfies Record<string, readonly string[]>;
type Field = keyof typeof FIELDS;
const EDIT_TEXT = ['"', '[', ']', '=', '\n', '\u0000', '\\', "'''", '#', '{', '\ufeff', '\ud800', ' = 1\n'];

/**
 * A manifest: the fixtures' valid one with a few keys replaced (so most runs differ from a valid
 * manifest in one or two places, and a failure shrinks to the key that matters), then a few text
 * edits; or, rarely, junk.
 */
export interface ManifestRecipe {
  set: { key: Field; value: string }[];
  edits: { at: number; del: number; ins: string }[];
  junk: string | null;
  /**
   * How the text lands as module.toml: a plain file, with a BOM, CRLF line ends or a stray
   * non-UTF-8 byte, through a symlink inside or outside the directory, or not a file at all.
   * (Not a FIFO: that hangs the registry, see the regression case.)
   */
  file: ManifestFile;
}

export const MANIFEST_FILES = ['plain', 'bom', 'crlf', 'latin1', 'symlink', 'symlink-out', 'dangling', 'directory', 'empty'] as const;
export type ManifestFile = (typeof MANIFEST_FILES)[number];

/** Writes module.toml as `file` says. */
function writeManifest(dir: string, text: string, file: ManifestFile, outsideDir: string): void {
  const path = join(dir, 'module.toml');
  switch (file) {
    case 'plain':
      return writeFileSync(path, text);
    case 'bom':
      return writeFileSync(path, `\ufeff${text}`);
    case 'crlf':
      return writeFileSync(path, text.replaceAll('\n', '\r\n'));
    case 'latin1': {
      // Two bytes that are not UTF-8 inside the description (or a comment, when there is none).
      const at = text.indexOf('"fuzz"');
      const [before, after] = at < 0 ? [`${text}# `, '\n'] : [`${text.slice(0, at)}"fu`, `zz"${text.slice(at + 6)}`];
      return writeFileSync(path, Buffer.concat([Buffer.from(before), Buffer.from([0xe9, 0xff]), Buffer.from(after)]));
    }
    case 'symlink':
      writeFileSync(join(dir, 'real.toml'), text);
      return symlinkSync('real.toml', path);
    case 'symlink-out': {
      const target = join(outsideDir, `${Math.random().toString(16).slice(2)}.toml`);
      writeFileSync(target, text);
      return symlinkSync(target, path);
    }
    case 'dangling':
      return symlinkSync('nowhere.toml', path);
    case 'directory':
      return mkdirSync(path);
    case 'empty':
      return writeFileSync(path, '');
  }
}

const fieldArb = fc.constantFrom(...(Object.keys(FIELDS) as Field[])).chain((key) => fc.record({ key: fc.constant(key), value: fc.constantFrom(...FIELDS[key]) }));

export const manifestArb: fc.Arbitrary<ManifestRecipe> = fc.record({
  set: fc.array(fieldArb, { maxLength: 3 }),
  edits: rarely(
    fc.array(fc.record({ at: fc.nat(), del: fc.nat({ max: 8 }), ins: fc.oneof(fc.constantFrom(...EDIT_TEXT), fc.string({ maxLength: 4, unit: 'binary' })) }), { minLength: 1, maxLength: 2 }),
    4,
  ).map((e) => e ?? []),
  junk: rarely(fc.string({ maxLength: 40, unit: 'binary' }), 15),
  file: fc.oneof({ weight: 12, arbitrary: fc.constant<ManifestFile>('plain') }, { weight: 1, arbitrary: fc.constantFrom(...MANIFEST_FILES) }),
});

function manifestText(r: ManifestRecipe, name: string, wasmPath: string): string {
  if (r.junk !== null) return r.junk;
  const v = new Map<Field, string>([['name', '"@NAME@"'], ['version', '"1.0.0"'], ['description', '"fuzz"'], ['wasm', '"plugin.wasm"'], ['mcp', 'true']]);
  const extra: string[] = [];
  for (const { key, value } of r.set) {
    if (key === 'extra') extra.push(value);
    else v.set(key, value);
  }
  const line = (key: string, field: Field): string => {
    const value = v.get(field);
    return value === undefined || value === OMIT ? '' : `${key} = ${value}\n`;
  };
  let text = '[module]\n' + line('name', 'name') + line('version', 'version') + line('description', 'description') + line('wasm', 'wasm') + line('execution_mode', 'execution_mode');
  text += '[protocols]\n' + line('mcp', 'mcp') + line('a2a', 'a2a');
  if (v.has('max_memory_mb') || v.has('max_execution_ms')) text += '[resources]\n' + line('max_memory_mb', 'max_memory_mb') + line('max_execution_ms', 'max_execution_ms');
  if (v.has('config')) text += `[config]\n${v.get('config')}\n`;
  if (v.has('root')) text += `[files]\nroot = ${v.get('root')}\n`;
  for (const e of extra) text += `${e}\n`;
  for (const e of r.edits) {
    const at = e.at % (text.length + 1);
    text = text.slice(0, at) + e.ins + text.slice(at + e.del);
  }
  return text.replaceAll('@NAME@', name).replaceAll('@ABS@', wasmPath);
}

// ---------------------------------------------------------------------------------------------
// One load.

export interface LoadCase {
  /**
   * `loadModule(dir)`; `scanDirectory` of a directory holding just this module; or that scan with a
   * valid module beside it (sorted after it, loaded at the same time), which must load and answer.
   */
  how: 'load' | 'scan' | 'beside';
  component: ComponentRecipe;
  /** null: the fixtures' manifest (a valid one) under the run's name. */
  manifest: ManifestRecipe | null;
}

const how = fc.constantFrom<LoadCase['how']>('load', 'scan', 'beside');

/** (a) mutated fixture components under a valid manifest. */
export const mutantCases: fc.Arbitrary<LoadCase> = fc.record({ how, component: mutantArb, manifest: fc.constant(null) });
/** (b) random bytes behind a valid component header. */
export const headerCases: fc.Arbitrary<LoadCase> = fc.record({ how, component: headerArb, manifest: fc.constant(null) });
/** (c) odd manifests over an intact fixture (mostly echo, so the valid ones load). */
export const manifestCases: fc.Arbitrary<LoadCase> = fc.record({
  how,
  component: fc.record({
    from: fc.constant('fixture' as const),
    kind: fc.oneof({ weight: 5, arbitrary: fc.constant<FixtureKind>('echo') }, { weight: 1, arbitrary: fixtureKind }),
    mutations: fc.constant([]),
  }),
  manifest: manifestArb,
});
/** (d) core modules from the WAT grammar, as components with the real WIT. */
export const watCases = (opts: { spin: boolean } = { spin: false }): fc.Arbitrary<LoadCase> =>
  fc.record({ how, component: fc.record({ from: fc.constant('wat' as const), wat: watArb(opts) }), manifest: fc.constant(null) });

/** (e) the plugin world plus an interface of odd WIT types, exported or imported (a dummy core module). */
export const witCases: fc.Arbitrary<LoadCase> = fc.record({ how, component: fc.record({ from: fc.constant('wit' as const), wit: witArb }), manifest: fc.constant(null) });

export const allCases = (opts: { spin: boolean } = { spin: true }): fc.Arbitrary<LoadCase> =>
  fc.oneof(
    { weight: 4, arbitrary: mutantCases },
    { weight: 2, arbitrary: headerCases },
    { weight: 3, arbitrary: manifestCases },
    { weight: 2, arbitrary: watCases(opts) },
    { weight: 1, arbitrary: witCases },
  );

// ---------------------------------------------------------------------------------------------
// Worker threads the registry starts, seen through async_hooks (a WORKER resource per thread):
// `init` when one is created, `destroy` once it has exited and its handle is closed.

type WorkerRole = 'toolchain' | 'guest';

class WorkerWatch {
  private readonly live = new Map<number, { role: WorkerRole; origin: string }>();
  private readonly waiters = new Set<() => void>();
  private readonly hook = createHook({
    init: (id, type) => {
      if (type !== 'WORKER') return;
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 40;
      const stack = new Error().stack ?? '';
      Error.stackTraceLimit = limit;
      // The transpiler's worker lives on between loads by design; every other one is a module's.
      const role: WorkerRole = /component-cache|[Tt]oolchain/.test(stack) ? 'toolchain' : 'guest';
      const origin = stack.split('\n').slice(3, 9).map((l) => l.trim()).join(' < ');
      this.live.set(id, { role, origin });
    },
    destroy: (id) => {
      if (!this.live.delete(id)) return;
      for (const wake of this.waiters) setImmediate(wake);
    },
  });

  enable(): this {
    this.hook.enable();
    return this;
  }

  disable(): void {
    this.hook.disable();
  }

  count(role?: WorkerRole): number {
    return [...this.live.values()].filter((w) => role === undefined || w.role === role).length;
  }

  describe(role?: WorkerRole): string {
    return [...this.live.values()].filter((w) => role === undefined || w.role === role).map((w) => `${w.role} from ${w.origin}`).join('\n');
  }

  /** Resolves true once at most `max` workers of the role are alive, false if `ms` pass first. */
  until(max: number, role: WorkerRole | undefined, ms: number): Promise<boolean> {
    if (this.count(role) <= max) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = (): void => {
        if (this.count(role) > max) return;
        done(true);
      };
      const timer = setTimeout(() => done(false), ms);
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(ok);
      };
      this.waiters.add(wake);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The harness: one registry, a sentinel module, and the property.

export const SENTINEL_CALL = { name: 'echo', argumentsJson: '{"x":1}', callId: 'c' } as const;
export const SENTINEL_ANSWER = { ok: true, value: { content: '{"x":1}', usage: undefined } } as const;

/** What the runs did, for the runner's summary (and to see the fuzz reach past the parser). */
export interface LoadStats {
  runs: number;
  served: number;
  remote: number;
  /** Refusals, in all and by the first words of their reason. */
  refusals: number;
  refused: Map<string, number>;
  /** Inputs after which a tolerated known defect showed (see `HarnessOptions.tolerate`). */
  tolerated: string[];
  slowestMs: number;
  slowest: string;
}

/**
 * The refusal that shows the toolchain worker broken by an earlier input: jco's wasm-tools
 * panicked (a Rust panic is a wasm trap) and its instance cannot be entered again.
 */
export const POISONED_TRANSPILER = /cannot enter component instance/;

export interface HarnessOptions {
  /**
   * A known defect, by the control load's refusal message, to record and get past instead of
   * failing on: the registry is closed and a fresh one (with a fresh sentinel) takes over.
   * Only while the defect waits for its fix; the regression case pins it down meanwhile.
   */
  tolerate?: RegExp;
}

export interface LoadFuzzHarness {
  /** The registry under test (a fresh one after a tolerated defect). */
  readonly registry: ModuleRegistry;
  readonly root: string;
  readonly stats: LoadStats;
  /** The property: throws (an assertion error or `Unsettled`) when the case breaks a rule. */
  check(input: LoadCase): Promise<void>;
  /** Closes the registry, checks that every worker is gone, removes the directories. */
  close(): Promise<void>;
}

function outsideEntries(root: string, component: Uint8Array): { dir: string; wasm: string } {
  const dir = join(root, 'outside');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'plugin.wasm'), component);
  return { dir, wasm: join(dir, 'plugin.wasm') };
}

/** Writes the odd entries the manifest's text names (creating all of them each run costs a FIFO). */
function writeOddEntries(dir: string, text: string, outside: { dir: string; wasm: string }): void {
  const wants = (name: string): boolean => text.includes(name);
  if (wants('inside.wasm')) symlinkSync('plugin.wasm', join(dir, 'inside.wasm'));
  if (wants('outside.wasm')) symlinkSync(outside.wasm, join(dir, 'outside.wasm'));
  if (wants('dangling.wasm')) symlinkSync(join(dir, 'nowhere.wasm'), join(dir, 'dangling.wasm'));
  if (wants('loop.wasm')) symlinkSync('loop.wasm', join(dir, 'loop.wasm'));
  if (wants('dir.wasm')) mkdirSync(join(dir, 'dir.wasm'));
  if (wants('fifo.wasm')) execFileSync('mkfifo', [join(dir, 'fifo.wasm')]);
  if (wants('empty.wasm')) writeFileSync(join(dir, 'empty.wasm'), '');
  if (wants('outside-dir')) symlinkSync(outside.dir, join(dir, 'outside-dir'));
}

/** The component with a custom section appended: new bytes (a transpile-cache miss), the same plugin. */
function withNonce(component: Uint8Array, nonce: string): Uint8Array {
  const name = new TextEncoder().encode('chatty-load-fuzz');
  const payload = new TextEncoder().encode(nonce);
  const body = [...encodeLeb(name.length), ...name, ...payload];
  return concat([component, [0x00, ...encodeLeb(body.length)], body]);
}

/** A short, stable name for a refusal reason: its words before the first quote, path or digit. */
function reasonKey(reason: string): string {
  const key = reason.replace(/\/[^\s:'"]+/g, '<path>').split(/[:'"\d(]/)[0]!.trim().slice(0, 60) || reason.slice(0, 60);
  return key.replace(/[\u0000-\u001f]/g, (c) => JSON.stringify(c).slice(1, -1)); // one line in the summary
}

export async function openHarness(options: HarnessOptions = {}): Promise<LoadFuzzHarness> {
  const root = mkdtempSync(join(tmpdir(), 'chatty-load-fuzz-'));
  const watch = new WorkerWatch().enable();
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  let current = '';
  // A crash cannot be caught; at least the input that caused it is on stderr.
  const onCrash = (err: Error): void => void process.stderr.write(`load fuzz: crashed on ${current}\n${err.stack ?? err.message}\n`);
  process.on('uncaughtExceptionMonitor', onCrash);

  const sentinelDir = join(root, 'sentinel');
  mkdirSync(sentinelDir);
  writeFileSync(join(sentinelDir, 'module.toml'), fixtureManifest('echo'));
  const echo = await buildFixture('echo');
  writeFileSync(join(sentinelDir, 'plugin.wasm'), echo);
  const outside = outsideEntries(root, echo);

  let registry!: ModuleRegistry;
  let sentinel!: ModuleHandle;
  let guestsAtRest = 0;
  const start = async (): Promise<void> => {
    registry = new ModuleRegistry({
      cacheDir: join(root, 'cache'), // the fuzz's own cache, removed with the rest
      logger: { log() {} },
      ceilings: { maxExecutionMs: FUZZ_EXECUTION_MS },
    });
    await registry.loadModule(sentinelDir);
    const loaded = registry.get('echo');
    assert.ok(loaded, 'the sentinel loaded');
    assert.deepEqual(await loaded.invokeTool({ ...SENTINEL_CALL }), SENTINEL_ANSWER);
    sentinel = loaded;
    guestsAtRest = watch.count('guest');
  };
  try {
    await start();
  } catch (err) {
    watch.disable();
    process.off('unhandledRejection', onUnhandled);
    process.off('uncaughtExceptionMonitor', onCrash);
    await registry.close();
    rmSync(root, { recursive: true, force: true });
    throw err;
  }

  const stats: LoadStats = { runs: 0, served: 0, remote: 0, refusals: 0, refused: new Map(), tolerated: [], slowestMs: 0, slowest: '' };
  const refused = (reason: string): void => {
    assert.equal(typeof reason, 'string');
    assert.ok(reason.trim().length > 0, 'a refusal names its reason');
    stats.refusals++;
    const key = reasonKey(reason);
    stats.refused.set(key, (stats.refused.get(key) ?? 0) + 1);
  };

  /** A served module answers or fails with PluginCallError; nothing else. */
  const exercise = async (name: string): Promise<void> => {
    const handle = registry.get(name);
    assert.ok(handle, `'${name}' loaded, so the registry has it`);
    const calls: [string, () => Promise<unknown>, number][] = [
      ['metadata', () => handle.metadata(), handle.limits.metadataTimeoutMs],
      ['list-tools', () => handle.listTools(), handle.limits.metadataTimeoutMs],
      ['invoke-tool', () => handle.invokeTool({ ...SENTINEL_CALL }), handle.limits.maxExecutionMs],
    ];
    for (const [what, call, ms] of calls) {
      try {
        await within(call(), callBound(ms), `${what} on the fuzzed module`);
      } catch (err) {
        if (err instanceof Unsettled) throw err;
        assert.ok(err instanceof PluginCallError, `${what} failed with ${String(err)}, not a PluginCallError`);
      }
    }
  };

  /** A known defect (see `HarnessOptions.tolerate`) is recorded and a fresh registry takes over. */
  const tolerated = async (refusal: string): Promise<boolean> => {
    if (!options.tolerate?.test(refusal)) return false;
    stats.tolerated.push(current);
    await registry.close();
    assert.ok(await watch.until(0, undefined, callBound(0)), `worker threads outlived registry.close():\n${watch.describe()}`);
    await start();
    return true;
  };

  /** After each run a fresh valid module (new bytes, so through the transpiler) still loads and answers. */
  const controlLoad = async (n: number): Promise<void> => {
    const dir = join(root, `control-${n}`);
    mkdirSync(dir);
    try {
      writeFileSync(join(dir, 'module.toml'), fixtureManifest('control'));
      writeFileSync(join(dir, 'plugin.wasm'), withNonce(echo, `${process.pid}-${n}`));
      try {
        await within(registry.loadModule(dir), LOAD_BOUND_MS, 'the control load');
      } catch (err) {
        if (err instanceof Unsettled) throw err;
        const message = err instanceof Error ? err.message : String(err);
        if (await tolerated(message)) return;
        assert.fail(`a valid module loaded after this run was refused: ${message}`);
      }
      const handle = registry.get('control');
      assert.ok(handle);
      assert.deepEqual(await within(handle.invokeTool({ ...SENTINEL_CALL }), callBound(handle.limits.maxExecutionMs), 'the control call'), SENTINEL_ANSWER);
      assert.equal(await registry.unload('control'), true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  let seq = 0;
  const check = async (input: LoadCase): Promise<void> => {
    const n = ++seq;
    stats.runs++;
    current = JSON.stringify(input);
    const name = `fz${n}`;
    const scanRoot = join(root, `run-${n}`);
    const dir = join(scanRoot, name);
    mkdirSync(dir, { recursive: true });
    try {
      const bytes = await componentBytes(input.component);
      writeFileSync(join(dir, 'plugin.wasm'), bytes);
      const text = input.manifest === null ? fixtureManifest(name) : manifestText(input.manifest, name, join(dir, 'plugin.wasm'));
      writeManifest(dir, text, input.manifest?.file ?? 'plain', outside.dir);
      mkdirSync(join(dir, 'data'));
      writeFileSync(join(dir, 'data', 'x.json'), '{}');
      writeOddEntries(dir, text, outside);

      const loaded: string[] = [];
      const started = performance.now();
      // A call to the sentinel while the load runs: loading must not hold up or disturb it.
      const during = sentinel.invokeTool({ ...SENTINEL_CALL }).then((value) => ({ value }), (error: unknown) => ({ error }));
      if (input.how === 'load') {
        try {
          const result = await within(registry.loadModule(dir), LOAD_BOUND_MS, 'loadModule');
          loaded.push(result.name);
          if ('executionMode' in result && result.executionMode !== 'local') stats.remote++;
          else await exercise(result.name);
        } catch (err) {
          if (err instanceof Unsettled) throw err;
          assert.ok(err instanceof PluginLoadError, `loadModule rejected with ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}, not a PluginLoadError`);
          refused(err.message);
        }
      } else {
        const besideDir = join(scanRoot, 'zz-beside');
        const beside = input.how === 'beside' ? `nb${n}` : null;
        if (beside !== null) {
          mkdirSync(besideDir);
          writeFileSync(join(besideDir, 'module.toml'), fixtureManifest(beside));
          writeFileSync(join(besideDir, 'plugin.wasm'), withNonce(echo, `beside-${process.pid}-${n}`));
        }
        const full = await within(registry.scanDirectory(scanRoot), LOAD_BOUND_MS, 'scanDirectory');
        if (beside !== null) {
          const refusal = full.failed.find((f) => f.dir === besideDir)?.reason;
          if (refusal !== undefined && (await tolerated(refusal))) return;
          assert.equal(refusal, undefined, `the valid module beside it in the same scan was refused: ${refusal}`);
          assert.ok(full.loaded.some((l) => l.name === beside));
          const handle = registry.get(beside)!;
          assert.deepEqual(await within(handle.invokeTool({ ...SENTINEL_CALL }), callBound(handle.limits.maxExecutionMs), 'the call beside'), SENTINEL_ANSWER);
          loaded.push(beside);
        }
        const report = { loaded: full.loaded.filter((l) => l.name !== beside), remote: full.remote, failed: full.failed.filter((f) => f.dir !== besideDir) };
        assert.ok(report.loaded.length + report.remote.length + report.failed.length <= 1, `one module directory, one outcome: ${JSON.stringify(report)}`);
        for (const f of report.failed) refused(f.reason);
        for (const r of report.remote) {
          loaded.push(r.name);
          stats.remote++;
        }
        for (const l of report.loaded) {
          loaded.push(l.name);
          await exercise(l.name);
        }
      }
      assert.deepEqual(await within(during, callBound(sentinel.limits.maxExecutionMs), 'the sentinel call during the load'), { value: SENTINEL_ANSWER });
      const ms = performance.now() - started;
      if (ms > stats.slowestMs) {
        stats.slowestMs = ms;
        stats.slowest = current.slice(0, 300);
      }
      for (const loadedName of loaded) {
        if (loadedName === name && registry.get(loadedName)) stats.served++;
        assert.equal(await within(registry.unload(loadedName), callBound(0), 'unload'), true, `unload('${loadedName}')`);
      }

      // No module worker outlives its load or unload (the transpiler's own may idle on).
      const settled = await watch.until(guestsAtRest, 'guest', callBound(0));
      assert.ok(settled, `a module worker thread was left behind:\n${watch.describe('guest')}`);
      assert.deepEqual(registry.list().map((h) => h.name), ['echo'], 'only the sentinel is loaded');
      assert.deepEqual(registry.remoteModules(), []);
      assert.equal(registry.get('echo'), sentinel, 'the sentinel is the same handle');
      assert.deepEqual(await within(sentinel.invokeTool({ ...SENTINEL_CALL }), callBound(sentinel.limits.maxExecutionMs), 'the sentinel call'), SENTINEL_ANSWER);
      assert.deepEqual(unhandled.splice(0), [], 'no unhandled rejection');
      await controlLoad(n);
    } catch (err) {
      // A broken rule may have left the registry broken too (a poisoned transpiler, a stuck
      // load): a fresh one takes over, so fast-check's shrinking blames the inputs that break it.
      await registry.close().catch(() => undefined);
      await watch.until(0, undefined, callBound(0));
      unhandled.splice(0);
      await start();
      throw err;
    } finally {
      rmSync(scanRoot, { recursive: true, force: true });
    }
  };

  return {
    get registry() {
      return registry;
    },
    root,
    stats,
    check,
    async close() {
      try {
        await registry.close();
        const gone = await watch.until(0, undefined, callBound(0));
        assert.ok(gone, `worker threads outlived registry.close():\n${watch.describe()}`);
      } finally {
        watch.disable();
        process.off('unhandledRejection', onUnhandled);
        process.off('uncaughtExceptionMonitor', onCrash);
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}

/** Runs `cases` against the harness; throws fast-check's report (seed, path, counterexample) on a failure. */
export async function runLoadFuzz(harness: LoadFuzzHarness, cases: fc.Arbitrary<LoadCase>, parameters: fc.Parameters<[LoadCase]>): Promise<fc.RunDetails<[LoadCase]>> {
  const details = await fc.check(fc.asyncProperty(cases, (input) => harness.check(input)), { includeErrorInReport: true, ...parameters });
  if (details.failed) throw new Error(fc.defaultReportMessage(details) ?? 'load fuzz: the property failed');
  return details;
}
