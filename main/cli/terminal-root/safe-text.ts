import stringWidth from 'string-width';
import { codePointLabel } from '../../display/index.js';

/**
 * What a worker sends (task text, steps, failure reasons, mail, its stderr quoted in an error)
 * reaches the terminal only through `printable`, so that it cannot move the cursor, erase a row,
 * set the window title or reorder what a line reads. The fields of an approval or a question go
 * through the display rule first (`main/display`, see `describe.ts`).
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
  return text.replace(ESCAPES, '').replace(CONTROLS, '').replace(BIDI, codePointLabel);
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
