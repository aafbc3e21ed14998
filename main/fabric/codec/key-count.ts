/**
 * The cheap half of duplicate-key detection. `JSON.parse` keeps one value per key, so a line with
 * a duplicate key has more keys in its text than in what it parses to. Counting the text's keys
 * walks the short structural stretches between strings with `charCodeAt` and jumps over each
 * string with one `indexOf` (native and fast); counting the parsed keys is a short walk. Together
 * far cheaper than a character-by-character scan. Only a line whose counts differ goes through the
 * full scan, which says which key is duplicated.
 */

import { MAX_NESTING_DEPTH } from '../wire/sizes.js';

const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;

/**
 * The line has a `metadata` key, so it may carry opaque values: it needs the full scan. A key
 * written with an escape (`"m\u0065tadata"` is `metadata` too) sends the line there as well: only
 * the full scan decodes keys.
 */
export const HAS_METADATA = -1;
/** The text is not JSON (an unterminated string); `JSON.parse` will say why. */
export const NOT_JSON = -2;
/**
 * The text nests deeper than `MAX_NESTING_DEPTH` (counted as the full scan counts: an empty `[]`
 * or `{}` opens no level). It is never handed to `JSON.parse`, which would build every level: a
 * 32 MiB line of `[` held ~0.9 GB of heap and ~6 s of the main thread before it was refused.
 */
export const TOO_DEEP = -3;

/**
 * Keys written in `text` (strings followed by a colon), or `HAS_METADATA` / `NOT_JSON` /
 * `TOO_DEEP`. Exact for valid JSON; for anything else `JSON.parse` fails and the count is never
 * used. The depth is exact for the valid prefix `JSON.parse` would read before it failed.
 * `metadataStops: false` reads on past a `metadata` key (never `HAS_METADATA`): `nestsTooDeep`.
 */
export function countTextKeys(text: string, metadataStops = true): number {
  const n = text.length;
  let keys = 0;
  let depth = 0;
  let i = 0;
  // The next backslash at or after the current string (-1: none left); moved forward lazily, so
  // a line's backslashes are looked for once in all (most lines have none: one indexOf).
  let slash = metadataStops ? text.indexOf('\\') : -1;
  // A level opens at a bracket, so a line of no more characters than the cap cannot pass it: its
  // levels are not counted (the count cost the codec's decode a quarter of its speed on every line).
  const deep = n > MAX_NESTING_DEPTH;
  while (i < n) {
    const at = text.charCodeAt(i);
    if (at !== QUOTE) {
      i++;
      if (!deep) continue;
      if (at === OPEN_OBJECT || at === OPEN_ARRAY) {
        let next = text.charCodeAt(i);
        while (next === 32 || next === 9 || next === 13 || next === 10) next = text.charCodeAt(++i);
        if (next === (at === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) i++;
        else if (++depth > MAX_NESTING_DEPTH) return TOO_DEEP;
      } else if (at === CLOSE_OBJECT || at === CLOSE_ARRAY) depth--;
      continue;
    }
    const open = i;
    let close = text.indexOf('"', open + 1);
    for (;;) {
      if (close < 0) return NOT_JSON;
      let slashes = 0;
      while (text.charCodeAt(close - 1 - slashes) === BACKSLASH) slashes++;
      if ((slashes & 1) === 0) break;
      close = text.indexOf('"', close + 1);
    }
    i = close + 1;
    let c = text.charCodeAt(i);
    while (c === 32 || c === 9 || c === 13 || c === 10) c = text.charCodeAt(++i);
    if (c === COLON) {
      // `metadataStops` is read for a key of 8 characters only, so the codec's key costs what it did
      // before the flag; without it `slash` is -1 and the two backslash tests never pass.
      if (close - open === 9 && metadataStops && text.startsWith('metadata', open + 1)) return HAS_METADATA;
      while (slash >= 0 && slash < open) slash = text.indexOf('\\', open);
      if (slash >= 0 && slash < close) return HAS_METADATA;
      keys++;
      i++;
    }
  }
  return keys;
}

/**
 * Whether `text` nests deeper than `MAX_NESTING_DEPTH`, by the count above (the one nesting bound
 * of both wires: main/jsonrpc's `parseFrame` refuses such a frame before `JSON.parse`). A level
 * opens at a bracket, so a text of no more characters than the cap, or of no more `[` and `{`
 * (strings' included), cannot pass it: the first is not read at all, the second only by
 * `indexOf` (native), and only a text of more brackets pays the count's walk.
 */
export function nestsTooDeep(text: string): boolean {
  return text.length > MAX_NESTING_DEPTH && moreOpeningsThanTheCap(text) && countTextKeys(text, false) === TOO_DEEP;
}

function moreOpeningsThanTheCap(text: string): boolean {
  let openings = 0;
  for (let at = text.indexOf('['); at >= 0; at = text.indexOf('[', at + 1)) if (++openings > MAX_NESTING_DEPTH) return true;
  for (let at = text.indexOf('{'); at >= 0; at = text.indexOf('{', at + 1)) if (++openings > MAX_NESTING_DEPTH) return true;
  return false;
}

/** Keys in a parsed JSON value, at every depth. */
export function countParsedKeys(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let keys = 0;
  if (Array.isArray(value)) {
    for (const item of value) keys += countParsedKeys(item);
    return keys;
  }
  // for-in allocates nothing; JSON.parse's objects have no enumerable inherited keys.
  for (const key in value) keys += 1 + countParsedKeys((value as Record<string, unknown>)[key]);
  return keys;
}
