/**
 * The envelope members (`jsonrpc`, `id`, `method`, `result`, `error`) at the top level of a JSON
 * object's text, read without building anything nested: a value that is an object or an array is
 * `null` here, a string, number or literal its own value. What classifies a frame refused as
 * nested too deeply, which is never parsed: its `id`, and whether it is call- or response-shaped
 * (`classifyMalformed`). Other members are passed over unbuilt (a body of a million top-level
 * members costs no million-key object). `undefined` when the text is not an object, or a member's
 * key or kept value is not JSON. Runs only on that refusal: one pass, strings skipped with
 * `indexOf`, nested levels an integer (no per-level state).
 */

import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE, isWs, stringEnd } from '../fabric/codec/json-text.js';

export function topLevelMembers(text: string): Record<string, unknown> | undefined {
  const n = text.length;
  let i = skipWs(text, 0);
  if (text.charCodeAt(i) !== OPEN_OBJECT) return undefined;
  // No prototype: a `__proto__` key is a member like any other, as JSON.parse makes it.
  const members = Object.create(null) as Record<string, unknown>;
  let depth = 1;
  // At the top level, the key whose value comes next.
  let key: string | undefined;
  i++;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const close = stringEnd(text, i);
      if (close < 0) return undefined;
      if (depth === 1) {
        if (key !== undefined) {
          if (key !== SKIPPED) members[key] = parsed(text.slice(i, close + 1));
          key = undefined;
        } else {
          const colon = skipWs(text, close + 1);
          if (text.charCodeAt(colon) !== COLON) return undefined;
          key = envelopeKey(text, i, close);
          if (key === undefined) return undefined;
          i = colon + 1;
          continue;
        }
      }
      i = close + 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === 1 && key !== undefined) {
        if (key !== SKIPPED) members[key] = null;
        key = undefined;
      }
      depth++;
      i++;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (--depth === 0) return members;
      i++;
    } else if (depth === 1 && key !== undefined && !isWs(c)) {
      // A number or a literal: up to the next delimiter.
      let end = i;
      while (end < n && !isDelimiter(text.charCodeAt(end))) end++;
      if (key !== SKIPPED) {
        const value = parsed(text.slice(i, end));
        if (value === undefined) return undefined;
        members[key] = value;
      }
      key = undefined;
      i = end;
    } else i++;
  }
  // Cut short: what was read is all there is to tell.
  return members;
}

/** The members `classifyMalformed` reads (and `jsonrpc`); any other key is `SKIPPED`. */
const ENVELOPE_KEYS: readonly string[] = ['jsonrpc', 'id', 'method', 'result', 'error'];
const SKIPPED = '';

/**
 * The key of the string from `open` to `close` when it is an envelope member, `SKIPPED` for any
 * other, `undefined` when it is not a JSON string. Only a key written with an escape is decoded
 * (`"\u0069d"` is `id`): the others are compared in place, nothing allocated.
 */
function envelopeKey(text: string, open: number, close: number): string | undefined {
  if (hasBackslash(text, open + 1, close)) {
    const key = parsed(text.slice(open, close + 1));
    if (typeof key !== 'string') return undefined;
    return ENVELOPE_KEYS.includes(key) ? key : SKIPPED;
  }
  for (const name of ENVELOPE_KEYS) if (close - open - 1 === name.length && text.startsWith(name, open + 1)) return name;
  return SKIPPED;
}

/** Read by hand, within the key only: an `indexOf` could run on to the end of the text for every key. */
function hasBackslash(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === BACKSLASH) return true;
  return false;
}

function parsed(literal: string): unknown {
  try {
    return JSON.parse(literal) as unknown;
  } catch {
    return undefined;
  }
}

function isDelimiter(c: number): boolean {
  return c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || c === QUOTE || c === OPEN_OBJECT || c === OPEN_ARRAY || isWs(c);
}

function skipWs(text: string, from: number): number {
  let i = from;
  while (isWs(text.charCodeAt(i))) i++;
  return i;
}
