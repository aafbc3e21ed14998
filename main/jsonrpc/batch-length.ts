/**
 * Whether a text is an array of more than `cap` entries, told from the text before `JSON.parse`
 * builds it: a 10 MiB body of `[{},[],…]` cost the caller's thread ~2 s of `JSON.parse` (millions
 * of values built) only to be refused for its length after. Read once, strings jumped over with
 * `indexOf`, nesting an integer; the read stops at the comma that makes the entry `cap + 1`, so a
 * long batch costs the reading of its first `cap + 1` entries, and what follows them is never read.
 *
 * Exact for JSON: outside strings, the commas of the outermost array's own level are its entries'
 * separators, so `cap` of them mean `cap + 1` entries. No token is checked (as the nesting count
 * checks none): a text that is not JSON but whose outermost array reads as more than `cap` entries
 * is refused for its length where `JSON.parse` would have said Parse error.
 */

import { CLOSE_ARRAY, CLOSE_OBJECT, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE, isWs, stringEnd } from '../fabric/codec/json-text.js';

export function arrayLongerThan(text: string, cap: number): boolean {
  const n = text.length;
  let i = 0;
  while (i < n && isWs(text.charCodeAt(i))) i++;
  // Only an array can be long: a message (an object) costs one character's look.
  if (text.charCodeAt(i) !== OPEN_ARRAY) return false;
  // Fewer commas in all (strings' included) than the cap cannot make cap + 1 entries: told by indexOf alone.
  if (!commasAtLeast(text, cap, i)) return false;
  let depth = 1;
  let commas = 0;
  for (i++; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const close = stringEnd(text, i);
      if (close < 0) return false;
      i = close;
    } else if (c === COMMA) {
      if (depth === 1 && ++commas >= cap) return true;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++;
    else if ((c === CLOSE_ARRAY || c === CLOSE_OBJECT) && --depth === 0) return false;
  }
  return false;
}

function commasAtLeast(text: string, count: number, from: number): boolean {
  let seen = 0;
  for (let at = text.indexOf(',', from); at >= 0; at = text.indexOf(',', at + 1)) if (++seen >= count) return true;
  return seen >= count;
}
