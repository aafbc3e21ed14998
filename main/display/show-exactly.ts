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

/**
 * Look-alike letters: in a word that has Latin letters, a letter of a script whose letters are
 * drawn like Latin ones (Cyrillic `а е о р с і ј ѕ`, Greek `ο ρ ν ι`, Armenian `օ`) is shown as
 * its code point too: `gіthub.com` (U+0456) is not `github.com`. A word wholly in one of those
 * scripts (`исправил`, `λόγος`) is shown as it is: it is read as what it is.
 */
const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const LATIN = /\p{Script=Latin}/u;
const LOOKALIKE_CLASS = '[\\p{Script=Cyrillic}\\p{Script=Greek}\\p{Script=Armenian}]';
const LOOKALIKE_ANY = new RegExp(LOOKALIKE_CLASS, 'u');
const LOOKALIKE_ALL = new RegExp(LOOKALIKE_CLASS, 'gu');

/** Where each character to label lies in `raw`, in order: hidden characters and look-alike letters. */
function hiddenAt(raw: string): { index: number; char: string }[] {
  const found = [...raw.matchAll(HIDDEN_ALL)].map((m) => ({ index: m.index, char: m[0] }));
  if (!LOOKALIKE_ANY.test(raw)) return found; // the common case: nothing to look for
  for (const word of raw.matchAll(WORD)) {
    if (!LATIN.test(word[0]) || !LOOKALIKE_ANY.test(word[0])) continue;
    for (const letter of word[0].matchAll(LOOKALIKE_ALL)) found.push({ index: word.index + letter.index, char: letter[0] });
  }
  return found.sort((a, b) => a.index - b.index);
}

/** `<U+202E>` for U+202E, `<U+E0041>` for a tag character, `<U+000D>` for a carriage return. */
export function codePointLabel(char: string): string {
  return `<U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** `raw` as a person may be shown it: each hidden character as its code point label. */
export function showExactly(raw: string): ShownText {
  const parts = shownParts(raw);
  return { text: parts.map((part) => part.text).join(''), hidden: parts.some((part) => part.hidden) };
}

/** `raw` with each character `showExactly` would label replaced by `replace(char)` (a file format's own escape, say). */
export function replaceHidden(raw: string, replace: (char: string) => string): string {
  let out = '';
  let from = 0;
  for (const { index, char } of hiddenAt(raw)) {
    out += raw.slice(from, index) + replace(char);
    from = index + char.length;
  }
  return out + raw.slice(from);
}

/** Whether `raw` holds any character `showExactly` would replace. */
export function hasHidden(raw: string): boolean {
  return hiddenAt(raw).length > 0;
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
  for (const { index, char } of hiddenAt(raw)) {
    if (index > from) parts.push({ text: raw.slice(from, index), hidden: false });
    parts.push({ text: codePointLabel(char), hidden: true });
    from = index + char.length;
  }
  if (from < raw.length) parts.push({ text: raw.slice(from), hidden: false });
  return parts;
}
