/**
 * The display rule for text a person approves or answers: every character a reader could not
 * see as it is becomes its code point, `<U+202E>`, so that what is shown is what runs. Used by
 * both roots (the terminal prompt and the renderer popover) for every field a worker controls.
 * No Node imports: the browser loads this module as it is.
 */
import { lookAlikesAt } from './look-alikes.js';

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
 * U+2000–U+200A, U+3000…), every default-ignorable code point (what a font may draw as nothing:
 * the Hangul fillers, the combining grapheme joiner, the variation selectors, the Khmer invisible
 * vowels U+17B4/U+17B5, the Mongolian selectors U+180B–U+180F), the Braille blank, the Khitan small
 * script filler U+16FE4 and the musical null notehead U+1D159 (each drawn blank, yet not
 * default-ignorable; `test/plugins/blank-glyphs.test.ts` holds the known blank glyphs), and U+FFFC (the object
 * replacement, drawn as nothing or a box). `\n` and `\t` are structure a reader sees, and
 * are kept (the lookahead).
 */
const HIDDEN_CLASS =
  '(?![\\n\\t ])[\\p{Cc}\\p{Cf}\\p{Cs}\\p{Co}\\p{Cn}\\p{Zl}\\p{Zp}\\p{Zs}\\p{Default_Ignorable_Code_Point}' +
  '\\u034F\\u115F\\u1160\\u2800\\u3164\\uFFA0\\uFFFC\\u{16FE4}\\u{1D159}\\uFE00-\\uFE0F\\u{E0100}-\\u{E01EF}]';
const HIDDEN_ALL = new RegExp(HIDDEN_CLASS, 'gu');

/** Where each character to label lies in `raw`, in order, each once: hidden characters and look-alikes (look-alikes.ts). */
function hiddenAt(raw: string): { index: number; char: string }[] {
  const found = hiddenCharacters(raw);
  const alike = lookAlikesAt(raw);
  if (alike.length === 0) return found; // the common case
  const byIndex = new Map<number, string>();
  for (const { index, char } of [...found, ...alike]) byIndex.set(index, char);
  return [...byIndex].map(([index, char]) => ({ index, char })).sort((a, b) => a.index - b.index);
}

/** Every character of the hidden class in `raw` (not the look-alikes), in order: what `firstHidden` finds first. */
export function hiddenCharacters(raw: string): { index: number; char: string }[] {
  return [...raw.matchAll(HIDDEN_ALL)].map((m) => ({ index: m.index, char: m[0] }));
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

/**
 * The first character of `raw` a reader could not see as it is (the hidden class alone, not the
 * look-alikes: prose in Greek or Cyrillic is read as what it is), or `undefined`. For text that is
 * refused rather than shown labelled, such as a plugin's tool descriptions a client's model reads.
 */
export function firstHidden(raw: string): { index: number; char: string } | undefined {
  const m = raw.match(HIDDEN_ONE);
  return m?.index === undefined ? undefined : { index: m.index, char: m[0] };
}
const HIDDEN_ONE = new RegExp(HIDDEN_CLASS, 'u');

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
