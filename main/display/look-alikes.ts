/**
 * Letters and marks a reader would take for ASCII ones, to be shown as code points: `gіthub.com`
 * (Cyrillic і), `раураӏ.com` (every letter Cyrillic: reads paypal.com), `ɡithub` (Latin script
 * g), `𝗀ithub` (maths sans-serif g), `gi̇thub` (a dot above an i), `;̸` (an overlay). What is
 * labelled, and why it is not more (docs/approvals.md, "Look-alike letters"):
 *
 * 1. In a word (a run of letters, marks and digits) that has Latin letters, every letter of another
 *    script but Han, Hiragana, Katakana and Hangul syllables, which no Latin letter is drawn like.
 * 2. A word with no Latin letter whose every letter is drawn like a Latin one (`LOOKS_LATIN`):
 *    when it has two letters or more, or its token (what lies between spaces) also has Latin
 *    letters (`https://а.com`). A Russian word with other letters (`файл`) is read as what it is.
 * 3. A letter outside ASCII that NFKC folds to ASCII letters or digits (maths letters, fullwidth,
 *    ligatures, `ℓ`), and the Latin letters outside ASCII drawn as an ASCII one (`LATIN_LOOKALIKES`).
 * 4. A combining mark on an ASCII character, unless the two make one precomposed letter (`e` +
 *    U+0301 is `é`); an overlay or enclosing mark anywhere; every mark of a run of three or more.
 *
 * No Node imports: the browser loads this module as it is.
 */

/** Cyrillic, Greek and Armenian letters drawn like a Latin one, and the Cherokee and Lisu scripts (built of them). */
const LOOKS_LATIN = new RegExp(
  '[\\u0430\\u0435\\u043E\\u0440\\u0441\\u0443\\u0445\\u0455\\u0456\\u0458\\u04CF\\u04BB\\u0501\\u051B\\u051D' +
    '\\u0410\\u0412\\u0415\\u041A\\u041C\\u041D\\u041E\\u0420\\u0421\\u0422\\u0423\\u0425\\u0405\\u0406\\u0408\\u04C0\\u04BA\\u0500\\u051A\\u051C\\u04AE' +
    '\\u03BF\\u03BD\\u03C1\\u03B9\\u03B1\\u03BA\\u03C5\\u03F2\\u03F3\\u03C7' +
    '\\u0391\\u0392\\u0395\\u0396\\u0397\\u0399\\u039A\\u039C\\u039D\\u039F\\u03A1\\u03A4\\u03A5\\u03A7\\u03F9\\u037F' +
    '\\u0585\\u057D\\u0570\\u0578\\u0566\\u0581\\u0584\\u054D\\u0555' +
    '\\p{Script=Cherokee}\\p{Script=Lisu}]',
  'u',
);

/** Latin letters outside ASCII, with no accent of their own, drawn as an ASCII letter (or `!`). */
const LATIN_LOOKALIKES = new Set([...'\u0251\u0261\u0131\u0237\u01C0\u01C1\u01C3\u0269\u026A\u028B\u028F\u1D04\u1D0F\u1D1C\u1D20\u1D21\u1D22\uA731\u01BD\u026F']);

const NON_ASCII = /[^\x00-\x7F]/;
const TOKEN = /\S+/gu;
const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const LETTER = /\p{L}/gu;
const LATIN = /\p{Script=Latin}/u;
/** Letters of no script of their own (maths letters are Common): left to rule 3. */
const NEUTRAL = /[\p{Script=Common}\p{Script=Inherited}]/u;
const NO_LATIN_LOOKALIKE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\uAC00-\uD7A3]/u;
const ASCII_LETTERS_OR_DIGITS = /^[A-Za-z0-9]+$/;
const FOLDABLE = /[\p{L}\p{Nd}\p{Nl}]/u;
const MARKS = /\p{M}+/gu;
/** Marks drawn over or around their base (combining class Overlay, and the enclosing marks). */
const OVERLAY = /[\u0334-\u0338\u1CD4\u1CE2-\u1CE8\u20D2\u20D3\u20D8-\u20DA\u20E5\u20E6\u20EA\u20EB\p{Me}]/u;

export interface Labelled {
  index: number;
  char: string;
}

/** Where each look-alike lies in `raw`, in no particular order (a character may be listed twice). */
export function lookAlikesAt(raw: string): Labelled[] {
  if (!NON_ASCII.test(raw)) return []; // the common case: nothing to look for
  const found: Labelled[] = [];
  for (const token of raw.matchAll(TOKEN)) {
    if (!NON_ASCII.test(token[0])) continue;
    const tokenHasLatin = LATIN.test(token[0]);
    for (const word of token[0].matchAll(WORD)) {
      const at = token.index + word.index;
      const letters = [...word[0].matchAll(LETTER)];
      const others = letters.filter(([letter]) => !LATIN.test(letter) && !NEUTRAL.test(letter));
      if (others.length === 0) continue;
      const mixed = letters.length > others.length && letters.some(([letter]) => LATIN.test(letter));
      const allLookLatin = others.length === letters.length && others.every(([letter]) => LOOKS_LATIN.test(letter)) && (letters.length >= 2 || tokenHasLatin);
      if (!mixed && !allLookLatin) continue;
      for (const letter of others) if (!NO_LATIN_LOOKALIKE.test(letter[0])) found.push({ index: at + letter.index, char: letter[0] });
    }
  }
  for (const char of raw.matchAll(/[^\x00-\x7F]/gu)) {
    const c = char[0];
    if (LATIN_LOOKALIKES.has(c) || (FOLDABLE.test(c) && ASCII_LETTERS_OR_DIGITS.test(c.normalize('NFKC')))) found.push({ index: char.index, char: c });
  }
  for (const run of raw.matchAll(MARKS)) {
    const base = run.index > 0 ? raw[run.index - 1]! : '';
    const marks = [...run[0]];
    const onAscii = base !== '' && !NON_ASCII.test(base);
    const composes = onAscii && marks.length === 1 && /[A-Za-z]/.test(base) && (base + marks[0]).normalize('NFC').length === 1;
    let offset = run.index;
    for (const mark of marks) {
      if ((onAscii && !composes) || marks.length >= 3 || OVERLAY.test(mark) || base === '') found.push({ index: offset, char: mark });
      offset += mark.length;
    }
  }
  return found;
}
