import { hiddenCharacters } from '../../display/index.js';
import { emojiRunCut, hiddenCharactersIn } from '../hidden-text.js';
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
/** The most bytes one UTF-16 unit becomes: `\u0000` (six); an astral character is two units, `\u{10ffff}` at most ten. */
const MAX_BYTES_PER_UNIT = 6;
/** The fewest units escaped at a time, so a line with little to escape is read in a few windows. */
const MIN_WINDOW = 1024;
/**
 * Units read either side of a window when judging what in it is hidden: an emoji sequence (at
 * most ~15 units) or a joiner inside a word is judged with what surrounds it. A joiner after more
 * marks than this is escaped (more escaped, never less).
 */
const CONTEXT = 64;
/**
 * How far before a window's context its judging looks back for the start of a run of emoji
 * characters the context would cut: judged from the run's start, as the whole line is. A longer
 * run has its hidden characters in the window escaped, all of them (more escaped, never less).
 */
const RUN_CONTEXT = 256;

/**
 * A guest's log line as one line of visible text, whatever logger prints it: a line break is
 * `\n` (`\r` for a carriage return), any other unsafe or hidden character its `\u` escape
 * (`\u001b`, `\u200b`, `\u{e0069}`). A plugin's line then cannot start a line the gateway did
 * not say, nor move a terminal's cursor, erase a row, reorder what a line reads or carry text no
 * font draws. Tab stays. At most `maxBytes` of UTF-8 (a line's cap), ending before an escape that
 * would not fit whole.
 *
 * Its cost is linear in what is kept, not in what the line holds: an escape is up to six times
 * its character, so the line is escaped a window at a time, each at most a sixth of the room left
 * (at least `MIN_WINDOW`), and reading stops when the room is used (a 64 KiB line of NULs reads
 * ~11,000 of them, the ones it keeps).
 */
export function oneLogLine(message: string, maxBytes: number): string {
  if (PLAIN.test(message)) return message; // the common line: nothing to copy
  const cut = cutUtf8(message, maxBytes);
  const out = new BoundedLine(maxBytes);
  let escapedAny = false;
  for (let from = 0; from < cut.length && !out.full; ) {
    let to = Math.min(cut.length, from + Math.max(MIN_WINDOW, Math.ceil(out.room / MAX_BYTES_PER_UNIT)));
    if (to < cut.length && isHighSurrogate(cut.charCodeAt(to - 1))) to++; // a pair stays in one window
    let at = from;
    for (const { index, char } of toEscapeIn(cut, from, to)) {
      out.add(cut.slice(at, index));
      out.add(escaped(char), true);
      at = index + char.length;
      escapedAny = true;
    }
    out.add(cut.slice(at, to));
    from = to;
  }
  // Nothing to escape: handed on as it is, whatever its length; cut when what is past the cap holds some.
  if (!escapedAny) return cut.length === message.length || !needsEscape(message) ? message : cut;
  return out.text;
}

/** Text appended up to `maxBytes` of UTF-8: a plain run cut at a character, an escape whole or not at all. */
class BoundedLine {
  text = '';
  private bytes = 0;
  full = false;
  constructor(private readonly maxBytes: number) {}
  get room(): number {
    return this.maxBytes - this.bytes;
  }
  add(piece: string, whole = false): void {
    if (this.full || piece === '') return;
    const size = Buffer.byteLength(piece, 'utf8');
    if (size <= this.room) {
      this.text += piece;
      this.bytes += size;
      return;
    }
    if (!whole) this.text += cutUtf8(piece, this.room);
    this.full = true;
  }
}

/** What in `text` between `from` and `to` is escaped, in order: each unsafe or hidden character once (hidden ones judged with `CONTEXT` units either side). */
function toEscapeIn(text: string, from: number, to: number): { index: number; char: string }[] {
  const unsafe = [...text.slice(from, to).matchAll(UNSAFE)].map((m) => ({ index: from + m.index, char: m[0] }));
  let start = Math.max(0, from - CONTEXT);
  // A run of emoji characters the context's start cuts is read from the run's start: read from
  // its middle, a chain of sequences (👨‍❤️‍👨‍❤️‍👨…) pairs up in another phase than the whole line's
  // and leaves joiners the rule names. A run longer than RUN_CONTEXT before it: all its hidden
  // characters in the window are escaped, the masking not asked.
  const cut = emojiRunCut(text, start, RUN_CONTEXT, to);
  if (cut?.start !== undefined) start = cut.start;
  const escapedAll = cut !== undefined && cut.start === undefined ? Math.min(to, cut.end) : from;
  const context = text.slice(start, Math.min(text.length, to + CONTEXT));
  const inWindow = ({ index }: { index: number }): boolean => index >= from && index < to;
  const shifted = ({ index, char }: { index: number; char: string }): { index: number; char: string } => ({ index: start + index, char });
  const hidden = [
    ...(escapedAll > from ? hiddenCharacters(context).map(shifted).filter((h) => inWindow(h) && h.index < escapedAll) : []),
    ...hiddenCharactersIn(context).map(shifted).filter((h) => inWindow(h) && h.index >= escapedAll),
  ];
  // Both in order: merged, a character in both once.
  const all: { index: number; char: string }[] = [];
  let u = 0;
  let h = 0;
  while (u < unsafe.length || h < hidden.length) {
    const next = h >= hidden.length || (u < unsafe.length && unsafe[u]!.index <= hidden[h]!.index) ? unsafe[u++]! : hidden[h++]!;
    if (all.at(-1)?.index !== next.index) all.push(next);
  }
  return all;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
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
