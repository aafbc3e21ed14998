import { cutUtf8 } from './host-imports.js';

/**
 * Characters a guest's log line may not carry as they are: C0 controls but tab, DEL, C1 controls
 * (ESC starts a terminal's escape sequences; 0x9B is an 8-bit CSI), the line and paragraph
 * separators, and the bidi marks, embeddings, overrides and isolates.
 */
const UNSAFE = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A guest's log line as one line of visible text, whatever logger prints it: a line break is
 * `\n` (`\r` for a carriage return), any other unsafe character its `\u` escape (`\u001b`). A
 * plugin's line then cannot start a line the gateway did not say, nor move a terminal's cursor,
 * erase a row or reorder what a line reads. Tab stays. At most `maxBytes` of UTF-8 (a line's cap).
 */
export function oneLogLine(message: string, maxBytes: number): string {
  UNSAFE.lastIndex = 0;
  if (!UNSAFE.test(message)) return message; // the common line: nothing to copy
  // Escapes are up to six times their character: only what can still fit is escaped.
  const escaped = cutUtf8(message, maxBytes).replace(UNSAFE, (char) => (char === '\n' ? '\\n' : char === '\r' ? '\\r' : `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`));
  return cutUtf8(escaped, maxBytes);
}
