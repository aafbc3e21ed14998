import { hiddenCharactersIn } from '../hidden-text.js';
import { cutUtf8 } from './host-imports.js';

/**
 * Characters a guest's log line may not carry as they are: C0 controls but tab, DEL, C1 controls
 * (ESC starts a terminal's escape sequences; 0x9B is an 8-bit CSI), the line and paragraph
 * separators, and the bidi marks, embeddings, overrides and isolates. Beside these, every
 * character a tool description may not hold (`hiddenCharactersIn`, the one rule: zero-width
 * characters, U+FEFF, tag characters, selectors, spaces but U+0020…) is escaped as well.
 */
const UNSAFE = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** A line of printable ASCII and tabs: nothing in it to escape (the common line, not scanned further). */
const PLAIN = /^[\t\x20-\x7e]*$/;

/**
 * A guest's log line as one line of visible text, whatever logger prints it: a line break is
 * `\n` (`\r` for a carriage return), any other unsafe or hidden character its `\u` escape
 * (`\u001b`, `\u200b`, `\u{e0069}`). A plugin's line then cannot start a line the gateway did
 * not say, nor move a terminal's cursor, erase a row, reorder what a line reads or carry text no
 * font draws. Tab stays. At most `maxBytes` of UTF-8 (a line's cap).
 */
export function oneLogLine(message: string, maxBytes: number): string {
  if (PLAIN.test(message)) return message; // the common line: nothing to copy
  // Escapes are up to ten times their character: only what can still fit is escaped.
  const cut = cutUtf8(message, maxBytes);
  const at = new Map<number, string>();
  for (const m of cut.matchAll(UNSAFE)) at.set(m.index, m[0]);
  for (const { index, char } of hiddenCharactersIn(cut)) at.set(index, char);
  // Nothing to escape: handed on as it is, whatever its length; cut when what is past the cap holds some.
  if (at.size === 0) return cut.length === message.length || !needsEscape(message) ? message : cut;
  let out = '';
  let from = 0;
  for (const index of [...at.keys()].sort((a, b) => a - b)) {
    const char = at.get(index)!;
    out += cut.slice(from, index) + escaped(char);
    from = index + char.length;
  }
  return cutUtf8(out + cut.slice(from), maxBytes);
}

function escaped(char: string): string {
  if (char === '\n') return '\\n';
  if (char === '\r') return '\\r';
  const code = char.codePointAt(0)!;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

function needsEscape(text: string): boolean {
  UNSAFE.lastIndex = 0;
  return UNSAFE.test(text) || hiddenCharactersIn(text).length > 0;
}
