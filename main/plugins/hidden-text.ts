import { codePointLabel, firstHidden, hiddenCharacters } from '../display/index.js';
import { MAX_SHOWN_TEXT_CHARS, outOfViewIn } from './out-of-view.js';

/** Whole emoji sequences (ZWJ families, keycaps, flags, ❤️): a person sees each as one picture. */
const RGI_EMOJI = new RegExp(String.raw`\p{RGI_Emoji}`, 'gv'); // the `v` flag: Node 20 (V8 11.2+)
/**
 * A run of the characters emoji sequences are made of: every character of an RGI sequence is
 * Emoji or Emoji_Component (UTS #51 ED-27: emoji, U+FE0F, U+200D, U+20E3, the tags, the
 * modifiers, regional indicators, the keycap bases), so a sequence never crosses a run's end and
 * scanning run by run masks what scanning the whole text does.
 */
const EMOJI_RUN = /[\p{Emoji}\p{Emoji_Component}]+/gu;
/** One character of such a run (`emojiRunCut`). */
const EMOJI_RUN_CHAR = /^[\p{Emoji}\p{Emoji_Component}]$/u;
/** The run of them a text begins with (`emojiRunCut`). */
const EMOJI_RUN_HEAD = /^[\p{Emoji}\p{Emoji_Component}]*/u;
/** The scripts whose words are written with ZWNJ/ZWJ inside them (Persian, the Indic conjuncts). */
const JOINING = String.raw`\p{Script=Arabic}\p{Script=Syriac}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}`;
/**
 * One ZWNJ or ZWJ between two letters (or a mark after one) of those scripts. The joiner comes
 * first and its lookbehind after it: V8 runs a leading lookbehind at every position, and inside a
 * run of k combining marks each scanned back over the run (O(k²): 8,000 marks took 2.4 s, a 1 MiB
 * description hours of the main thread). Now any other position fails on its one character, and
 * a joiner scans back over only the marks before it.
 */
const JOINER_IN_WORD = new RegExp(`[\\u200c\\u200d](?<=[${JOINING}]\\p{M}*[\\u200c\\u200d])(?=[${JOINING}])`, 'gu');
/** No-break spaces (French typography, text pasted from a web page): seen as spaces. */
const NO_BREAK_SPACE = /[\u00a0\u202f]/gu;

/**
 * Why `text` a plugin wrote for a model to read (a tool's description, the module's, any schema
 * string) may not be served: `holds <U+E0041> at character 8, which a reader cannot see`, or text
 * pushed out of view (`outOfViewIn`), or `undefined`. Tag characters spell ASCII a model reads and
 * no font draws ("ASCII smuggling"), zero-width characters and selector runs carry bits, a bidi
 * override reorders what the person reads: the display rule's hidden characters (main/display),
 * not its look-alikes (prose in Greek or Cyrillic is what it says). Narrower than the display
 * rule in three ways, each text a person sees as written: a whole RGI emoji sequence (its
 * selectors, joiners and tags included; arbitrary tag runs and VS17+ are not RGI), a single
 * ZWNJ/ZWJ inside a word of a script written with them, and U+00A0/U+202F. Each is masked with a
 * plain character of the same length, so the position named is the text's own.
 */
export function hiddenIn(text: string): string | undefined {
  // Surely over the characters a person reads (each is at most two UTF-16 units): refused for its
  // length, never scanned whole (1 MiB of U+1F600 U+200B: ~1.4 s of the main thread).
  if (text.length > 2 * MAX_SHOWN_TEXT_CHARS) return outOfViewIn(text);
  // Masking only takes characters away: text with none hidden as it is skips the emoji scan, whose
  // \p{RGI_Emoji} costs V8 1-6 µs a position (a 1 MiB description of U+1F600: ~1.7 s of the main thread).
  const hidden = firstHidden(text) === undefined ? undefined : firstHidden(seenAsWritten(text));
  if (hidden === undefined) return outOfViewIn(text);
  const at = [...text.slice(0, hidden.index)].length + 1;
  return `holds ${codePointLabel(hidden.char)} at character ${at}, which a reader cannot see (an invisible or reordering character: write the text without it)`;
}

/**
 * Every character of `text` `hiddenIn` would name, in order (the same rule: the display rule's
 * hidden class but the three kinds of text seen as written). The host's log lines escape them
 * (`worker/log-line.ts`): a folder `echo<U+200B>` must not read as `echo`, nor a tag run carry
 * words no font draws.
 */
export function hiddenCharactersIn(text: string): { index: number; char: string }[] {
  // Masking only takes characters away (each becomes a plain one): text with none hidden as it is
  // has none once masked, and skips the emoji scan (slow on long non-ASCII text).
  return firstHidden(text) === undefined ? [] : hiddenCharacters(seenAsWritten(text));
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** `text` with what a person sees as written masked by plain characters of the same length (positions are the text's own). */
function seenAsWritten(text: string): string {
  // Every emoji sequence, joiner and no-break space holds a non-ASCII character: ASCII text (a
  // line of NULs, say) is as it is, without the emoji scan's ~0.5 µs a character.
  if (ASCII_ONLY.test(text)) return text;
  // The emoji scan costs V8 1-3 µs a position outside Latin-1: only a run of emoji characters
  // holding a hidden one can change the answer (a no-break space or a joiner between letters is
  // masked without it). Scanned whole, 1 MiB of served strings of U+1F600 U+00A0 cost ~1.6 s.
  return text
    .replace(EMOJI_RUN, (run) => (firstHidden(run) === undefined ? run : run.replace(RGI_EMOJI, (emoji) => 'x'.repeat(emoji.length))))
    .replace(JOINER_IN_WORD, 'x')
    .replace(NO_BREAK_SPACE, ' ');
}

/**
 * A cut of `text` at `at` that falls inside a run of emoji characters: where the run begins (when
 * within `maxBack` units before the cut) and where it ends (at most `limit`), or `undefined` when
 * the cut falls inside none. Sequences pair up from a run's start, so text judged from a cut inside
 * a run (a log line's window and its context, `worker/log-line.ts`) reads a chain of them
 * (👨‍❤️‍👨‍❤️‍👨…) in another phase than the whole text does, and misses joiners the whole text's
 * judgment names.
 */
export function emojiRunCut(text: string, at: number, maxBack: number, limit: number): { start: number | undefined; end: number } | undefined {
  if (at <= 0 || at >= text.length) return undefined;
  // A cut between the halves of a pair: the pair is the character before it, the text after it begins past the pair.
  const split = isLowSurrogate(text.charCodeAt(at)) && isHighSurrogate(text.charCodeAt(at - 1));
  const after = split ? at + 1 : at;
  if (!isRunChar(text, charBefore(text, after))) return undefined;
  if (!split && !isRunChar(text, at)) return undefined;
  let start = charBefore(text, after);
  while (start > 0 && at - start <= maxBack && isRunChar(text, charBefore(text, start))) start = charBefore(text, start);
  const end = after + EMOJI_RUN_HEAD.exec(text.slice(after, Math.max(after, limit)))![0].length;
  return { start: at - start <= maxBack ? start : undefined, end };
}

/** Where the character ending just before `i` begins. */
function charBefore(text: string, i: number): number {
  return i >= 2 && isLowSurrogate(text.charCodeAt(i - 1)) && isHighSurrogate(text.charCodeAt(i - 2)) ? i - 2 : i - 1;
}

function isRunChar(text: string, i: number): boolean {
  return EMOJI_RUN_CHAR.test(String.fromCodePoint(text.codePointAt(i)!));
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
