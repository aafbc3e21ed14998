/**
 * The display rule for text a person approves or answers: every character a reader could not
 * see as it is becomes its code point, `<U+202E>`, so that what is shown is what runs. Used by
 * both roots (the terminal prompt and the renderer popover) for every field a worker controls.
 * No Node imports: the browser loads this module as it is.
 */

export interface ShownText {
  /** The text with each hidden character replaced by `<U+XXXX>` (at least four hex digits, upper case). */
  text: string;
  /** True when at least one character was replaced. */
  hidden: boolean;
}

/**
 * What counts as hidden: controls (C0, DEL, C1: `\r`, ESC…), format characters (bidi controls,
 * zero-width space/joiners, soft hyphen, tag characters), lone surrogates, private-use and
 * unassigned code points, line and paragraph separators, every space but U+0020 (NBSP,
 * U+2000–U+200A, U+3000…), and characters that draw nothing though Unicode calls them letters or
 * marks: the Hangul fillers, the Braille blank, the combining grapheme joiner and the variation
 * selectors. `\n` and `\t` are structure a reader sees, and are kept (the lookahead).
 */
const HIDDEN_CLASS =
  '(?![\\n\\t ])[\\p{Cc}\\p{Cf}\\p{Cs}\\p{Co}\\p{Cn}\\p{Zl}\\p{Zp}\\p{Zs}' +
  '\\u034F\\u115F\\u1160\\u2800\\u3164\\uFFA0\\uFE00-\\uFE0F\\u{E0100}-\\u{E01EF}]';
const HIDDEN_ALL = new RegExp(HIDDEN_CLASS, 'gu');
const HIDDEN_ANY = new RegExp(HIDDEN_CLASS, 'u');

/** `<U+202E>` for U+202E, `<U+E0041>` for a tag character, `<U+000D>` for a carriage return. */
export function codePointLabel(char: string): string {
  return `<U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** `raw` as a person may be shown it: each hidden character as its code point label. */
export function showExactly(raw: string): ShownText {
  let hidden = false;
  const text = replaceHidden(raw, (char) => {
    hidden = true;
    return codePointLabel(char);
  });
  return { text, hidden };
}

/** `raw` with each character `showExactly` would label replaced by `replace(char)` (a file format's own escape, say). */
export function replaceHidden(raw: string, replace: (char: string) => string): string {
  return raw.replace(HIDDEN_ALL, replace);
}

/** Whether `raw` holds any character `showExactly` would replace. */
export function hasHidden(raw: string): boolean {
  return HIDDEN_ANY.test(raw);
}

/** One run of `raw` as shown: visible text as it is, or one hidden character as its label. */
export interface ShownPart {
  text: string;
  hidden: boolean;
}

/**
 * `raw` cut into visible runs and hidden characters, so a page can draw a label differently from
 * the same letters typed by the worker (a literal `<U+202E>` in the text is not a hidden character).
 */
export function shownParts(raw: string): ShownPart[] {
  const parts: ShownPart[] = [];
  let from = 0;
  for (const match of raw.matchAll(HIDDEN_ALL)) {
    if (match.index > from) parts.push({ text: raw.slice(from, match.index), hidden: false });
    parts.push({ text: codePointLabel(match[0]), hidden: true });
    from = match.index + match[0].length;
  }
  if (from < raw.length) parts.push({ text: raw.slice(from), hidden: false });
  return parts;
}
