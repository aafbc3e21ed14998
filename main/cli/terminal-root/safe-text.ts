import stringWidth from 'string-width';

/**
 * What a worker sends (task text, steps, approvals, questions, failure reasons, mail, its stderr
 * quoted in an error) reaches the terminal only through these, so that it cannot move the cursor,
 * erase a row, set the window title or reorder what a line reads.
 */

/** Escape sequences (CSI, OSC ended by BEL or ST, or ESC and one character) and a lone ESC. */
const ESCAPES = /\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|.)?/g;
/** C0 controls other than new line and tab, DEL, and the C1 controls (U+0080–U+009F: 8-bit CSI, OSC, ST…). */
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
/** Bidirectional overrides, embeddings and isolates: they can show a line's text in another order than it has. */
const BIDI = /[\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text as a terminal may show it: escape sequences and control characters other than new line
 * and tab removed, and bidirectional controls shown as `<U+202E>` instead of obeyed.
 */
export function printable(text: string): string {
  return text.replace(ESCAPES, '').replace(CONTROLS, '').replace(BIDI, (c) => `<U+${c.codePointAt(0)!.toString(16).toUpperCase()}>`);
}

/** Anything a reader could not see as it is: controls, format characters (bidi, zero-width), line and paragraph separators, unassigned code points. */
const HIDDEN = /[\p{C}\p{Zl}\p{Zp}]/u;

/**
 * A command or path as an approval shows it: as it is when every character of it is visible, else
 * JSON-quoted with each hidden character escaped (`"ls\u001b[2K\r…"`), so that what is approved is
 * exactly what is shown.
 */
export function exactly(text: string): string {
  if (!HIDDEN.test(text) && text.trim() === text && text !== '') return text;
  return JSON.stringify(text).replace(/[\p{C}\p{Zl}\p{Zp}]/gu, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`);
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** How many terminal columns `text` (printable, one row) takes: a wide (CJK, emoji) character two. */
export function columnsOf(text: string): number {
  return stringWidth(text);
}

/** `text` cut to at most `columns` display columns, ending in `…` when cut. */
export function fitColumns(text: string, columns: number): string {
  if (columnsOf(text) <= columns) return text;
  let shown = '';
  let used = 0;
  for (const { segment } of graphemes.segment(text)) {
    const width = columnsOf(segment);
    if (used + width > columns - 1) break;
    shown += segment;
    used += width;
  }
  return `${shown}…`;
}
