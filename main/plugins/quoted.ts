/**
 * A plugin's own text (a schema value, an import specifier, a file name) as a message shows it:
 * JSON, ASCII only, cut. Its refusals reach a terminal, serve's log and a client's error, so a
 * line break, a bidi override or a C1 control in it must not arrive raw, nor a megabyte.
 */

/** How much of a value a message quotes. */
export const QUOTED_CHARS = 80;

/** JSON text with every character past ASCII escaped, so a look-alike or a bidi control shows as what it is. */
export function asciiOnly(json: string): string {
  return json.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `value` as JSON, ASCII only, at most `QUOTED_CHARS` of it (`"abc…"… (N characters)` when cut). */
export function quoted(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  if (json.length <= QUOTED_CHARS) return asciiOnly(json);
  return `${asciiOnly(json.slice(0, QUOTED_CHARS))}… (${json.length} characters)`;
}
