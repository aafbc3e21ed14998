/**
 * One linear pass over a line of JSON text that finds what `JSON.parse` hides or should never do:
 * duplicate keys (at any depth; `JSON.parse` keeps the last one silently) and the spans of the
 * opaque values at `result.metadata.<key>`, which are cut out before parsing so the broker never
 * turns them into objects.
 *
 * Outside an opaque span the pass checks only the grammar's structure (brackets, keys, colons,
 * commas) and skips strings with `indexOf`: `JSON.parse` checks the tokens of what it parses
 * anyway. Inside an opaque span nobody else will look, so tokens are checked fully here.
 */

import { MAX_NESTING_DEPTH } from '../wire/sizes.js';
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE, isWs, stringEnd as closingQuote } from './json-text.js';

export interface OpaqueSpan {
  /** The key under `result.metadata`. */
  key: string;
  start: number;
  end: number;
}

export type ScanResult = { ok: true; spans: OpaqueSpan[] } | { ok: false; reason: string };

/** Small objects compare keys in an array; past this many a Set keeps a wide object linear. */
const SMALL_OBJECT_KEYS = 8;

const STRING_RUN = /[^"\\\u0000-\u001f]*/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

class ScanError extends Error {}

function fail(reason: string, at: number): never {
  throw new ScanError(`${reason} at offset ${at}`);
}

function isDelimiter(c: number): boolean {
  return c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || isWs(c);
}

/** Index of the closing quote of the string opening at `open`, without checking its contents. */
function stringEnd(text: string, open: number): number {
  const close = closingQuote(text, open);
  if (close < 0) fail('unterminated string', open);
  return close;
}

/** Checks a string's contents as JSON.parse would (escapes, no raw control characters). */
function checkString(text: string, open: number, close: number): void {
  let at = open + 1;
  while (at < close) {
    STRING_RUN.lastIndex = at;
    STRING_RUN.test(text);
    at = STRING_RUN.lastIndex;
    if (at >= close) return;
    if (text.charCodeAt(at) !== BACKSLASH) fail('control character in a string', at);
    ESCAPE.lastIndex = at;
    if (!ESCAPE.test(text)) fail('bad escape in a string', at);
    at = ESCAPE.lastIndex;
  }
}

function checkScalar(text: string, start: number, end: number): void {
  const c = text.charCodeAt(start);
  if (c === 116 || c === 102 || c === 110) {
    const word = text.slice(start, end);
    if (word !== 'true' && word !== 'false' && word !== 'null') fail('bad literal', start);
    return;
  }
  NUMBER.lastIndex = start;
  if (!NUMBER.test(text) || NUMBER.lastIndex !== end) fail('bad number', start);
}

/** The keys one open object has seen so far. */
class KeySet {
  private few: string[] = [];
  private many: Set<string> | undefined;
  /** Adds `key`; false when it was already there. */
  add(key: string): boolean {
    if (this.many) {
      if (this.many.has(key)) return false;
      this.many.add(key);
      return true;
    }
    if (this.few.includes(key)) return false;
    this.few.push(key);
    if (this.few.length > SMALL_OBJECT_KEYS) this.many = new Set(this.few);
    return true;
  }
}

/**
 * Scans `text`; `opaqueKeys` names the keys whose values under `result.metadata` are opaque.
 * Never throws: every failure is `{ ok: false, reason }`.
 */
export function scanJson(text: string, opaqueKeys: ReadonlySet<string>): ScanResult {
  try {
    return { ok: true, spans: new Scanner(text, opaqueKeys).run() };
  } catch (err) {
    if (err instanceof ScanError) return { ok: false, reason: err.message };
    // A pathological input can still exhaust something (the regexp stack, say): not the peer's
    // right to throw through us, so it is a decode failure like any other.
    return { ok: false, reason: `unscannable JSON (${(err as Error).message})` };
  }
}

/** What an open container is (`Scanner.kinds`). */
const ARRAY = 0;
const NEW_OBJECT = 1;
const OBJECT = 2;

// A class, not closures: a hot loop should not allocate functions per line.
class Scanner {
  private readonly n: number;
  private readonly spans: OpaqueSpan[] = [];
  /**
   * One byte per open container: an array, an object with no key read yet, or one with keys. The
   * depth is capped (`MAX_NESTING_DEPTH`), so every per-level structure here holds at most that
   * many levels: a line that nests millions deep is refused, not held (a key set per level held
   * ~1.5 GB of heap for a 31 MiB line of `{"a":` nested, and `{"a":0,"b":` still ran out of heap
   * when only objects at their second key had one).
   */
  private readonly kinds = new Uint8Array(MAX_NESTING_DEPTH);
  /** The key being read, per open object (levels that are arrays are never read). */
  private readonly keys: string[] = [];
  /** The key sets of open objects that have read two keys or more, by level: a one-key object needs none. */
  private readonly keySets = new Map<number, KeySet>();
  private depth = 0;
  private i = 0;
  private captureDepth = -1;
  private captureStart = 0;
  private captureKey = '';
  /** Inside an opaque span: check tokens ourselves. */
  private strict = false;

  constructor(
    private readonly text: string,
    private readonly opaqueKeys: ReadonlySet<string>,
  ) {
    this.n = text.length;
  }

  private skipWs(): void {
    const { text, n } = this;
    let i = this.i;
    while (i < n && isWs(text.charCodeAt(i))) i++;
    this.i = i;
  }

  run(): OpaqueSpan[] {
    const { text, n } = this;
    // Each iteration reads one value, then the punctuation after it.
    for (;;) {
      this.skipWs();
      if (this.i >= n) fail('unexpected end', this.i);
      const c = text.charCodeAt(this.i);
      if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        this.i++;
        this.skipWs();
        if (text.charCodeAt(this.i) !== (c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) {
          if (this.depth === MAX_NESTING_DEPTH) fail(`nesting deeper than ${MAX_NESTING_DEPTH}`, this.i - 1);
          this.kinds[this.depth] = c === OPEN_OBJECT ? NEW_OBJECT : ARRAY;
          this.depth++;
          // A fresh object reads its first key; a fresh array its first value.
          if (c === OPEN_OBJECT) this.readKey();
          continue;
        }
        this.i++;
      } else if (c === QUOTE) {
        const close = stringEnd(text, this.i);
        if (this.strict) checkString(text, this.i, close);
        this.i = close + 1;
      } else {
        const start = this.i;
        let i = start;
        while (i < n && !isDelimiter(text.charCodeAt(i))) i++;
        if (i === start) fail('unexpected character', i);
        if (this.strict) checkScalar(text, start, i);
        this.i = i;
      }
      if (this.afterValue()) return this.spans;
    }
  }

  /** After a value: closes containers and reads separators up to the next value; true at the end. */
  private afterValue(): boolean {
    const { text } = this;
    for (;;) {
      if (this.depth === this.captureDepth) {
        this.spans.push({ key: this.captureKey, start: this.captureStart, end: this.i });
        this.captureDepth = -1;
        this.strict = false;
      }
      this.skipWs();
      if (this.depth === 0) {
        if (this.i !== this.n) fail('trailing characters', this.i);
        return true;
      }
      const p = text.charCodeAt(this.i);
      const inObject = this.kinds[this.depth - 1] !== ARRAY;
      if (p === COMMA) {
        this.i++;
        if (inObject) this.readKey();
        return false;
      }
      if (p !== (inObject ? CLOSE_OBJECT : CLOSE_ARRAY)) fail(inObject ? "expected ',' or '}'" : "expected ',' or ']'", this.i);
      this.i++;
      this.depth--;
      if (this.keySets.size > 0) this.keySets.delete(this.depth);
    }
  }

  private readKey(): void {
    const { text } = this;
    this.skipWs();
    const open = this.i;
    if (text.charCodeAt(open) !== QUOTE) fail('expected a key', open);
    const close = stringEnd(text, open);
    if (this.strict) checkString(text, open, close);
    let key = text.slice(open + 1, close);
    if (key.includes('\\')) {
      try {
        key = JSON.parse(text.slice(open, close + 1)) as string;
      } catch {
        fail('bad escape in a key', open);
      }
    }
    const depth = this.depth;
    const level = depth - 1;
    if (this.kinds[level] === NEW_OBJECT) {
      this.kinds[level] = OBJECT; // its first key: nothing to compare with
    } else {
      let seen = this.keySets.get(level);
      if (seen === undefined) {
        seen = new KeySet();
        seen.add(this.keys[level]!); // the first key, still the one held for this level
        this.keySets.set(level, seen);
      }
      if (!seen.add(key)) fail(`duplicate key ${JSON.stringify(key)}`, open);
    }
    this.keys[level] = key;
    this.i = close + 1;
    this.skipWs();
    if (text.charCodeAt(this.i) !== COLON) fail("expected ':'", this.i);
    this.i++;
    // `result.metadata.<opaque key>` of the frame object: the value starts after the colon.
    if (depth === 3 && this.captureDepth < 0 && this.opaqueKeys.has(key) && this.keys[0] === 'result' && this.keys[1] === 'metadata' && this.kinds[0] !== ARRAY && this.kinds[1] !== ARRAY) {
      this.skipWs();
      this.captureDepth = depth;
      this.captureStart = this.i;
      this.captureKey = key;
      this.strict = true;
    }
  }
}
