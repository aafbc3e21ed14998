/**
 * What the hand-written readers of JSON text (json-scan's full scan, jsonrpc's top-members) share:
 * the structural characters' codes, JSON's whitespace, and the end of a string found with `indexOf`
 * (native) rather than a character at a time. key-count's hot loop keeps its own inline copies.
 */

export const QUOTE = 34;
export const BACKSLASH = 92;
export const COLON = 58;
export const COMMA = 44;
export const OPEN_OBJECT = 123;
export const CLOSE_OBJECT = 125;
export const OPEN_ARRAY = 91;
export const CLOSE_ARRAY = 93;

/** JSON's four whitespace characters. */
export function isWs(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/** The closing quote of the string opening at `open` (its contents unchecked), or -1 when it is not closed. */
export function stringEnd(text: string, open: number): number {
  let close = text.indexOf('"', open + 1);
  while (close >= 0) {
    let slashes = 0;
    while (text.charCodeAt(close - 1 - slashes) === BACKSLASH) slashes++;
    if ((slashes & 1) === 0) return close;
    close = text.indexOf('"', close + 1);
  }
  return -1;
}
