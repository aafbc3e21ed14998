/**
 * The emoji scan (`\p{RGI_Emoji}`) runs only over runs of emoji characters holding a hidden one
 * (`hidden-text.ts`): every character of an RGI sequence is Emoji or Emoji_Component, so a
 * sequence never crosses a run's end. This holds the answers to those of the scan over the
 * whole text, on random text made of the characters that meet at a run's edge.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { firstHidden, hiddenCharacters } from '../../main/display/index.js';
import { hiddenCharactersIn, hiddenIn } from '../../main/plugins/hidden-text.js';

/** What the whole-text scan found hidden (hidden-text.ts before the runs). */
function wholeScan(text: string): { index: number; char: string }[] {
  if (firstHidden(text) === undefined) return [];
  const masked = text
    .replace(new RegExp(String.raw`\p{RGI_Emoji}`, 'gv'), (emoji) => 'x'.repeat(emoji.length))
    .replace(/[\u200c\u200d](?<=[\p{Script=Arabic}\p{Script=Devanagari}]\p{M}*[\u200c\u200d])(?=[\p{Script=Arabic}\p{Script=Devanagari}])/gu, 'x')
    .replace(/[\u00a0\u202f]/gu, ' ');
  return hiddenCharacters(masked);
}

/** Emoji and their parts, the keycap bases, joiners and selectors, letters of a joining script, no-break spaces, tags. */
const PIECES = [
  '\u{1F600}', '\u{1F468}', '\u{1F469}', '\u{1F467}', '\u2764', '\u{1F3F3}', '\u{1F308}', '\u{1F3F4}', '\u{1F44D}',
  '\u{1F3FB}', '\u{1F3FD}', '\u{1F1FA}', '\u{1F1F8}', '\u{1F1E6}', '\u200d', '\u200c', '\ufe0f', '\ufe0e', '\u20e3', '1', '#', '*',
  '\u{E0067}', '\u{E0062}', '\u{E0065}', '\u{E006E}', '\u{E007F}', '\u{E0041}', '\u00a0', '\u200b', 'a', ' ', '\u0915', '\u094d', '\u0628', '\u00a9', '\u{E0100}',
];

it('the run-by-run emoji scan finds what the whole-text scan found, on 20,000 random texts', () => {
  let seed = 0x5eed;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const sequences = ['\u{1F468}\u200d\u{1F469}\u200d\u{1F467}', '\u2764\ufe0f', '1\ufe0f\u20e3', '\u{1F3F3}\ufe0f\u200d\u{1F308}', '\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}', '\u{1F44D}\u{1F3FD}', '\u0915\u200d\u0915'];
  for (let i = 0; i < 20_000; i++) {
    let text = '';
    const length = 1 + random(12);
    for (let j = 0; j < length; j++) text += random(4) === 0 ? sequences[random(sequences.length)]! : PIECES[random(PIECES.length)]!;
    assert.deepEqual(hiddenCharactersIn(text), wholeScan(text), JSON.stringify(text));
    const first = wholeScan(text)[0];
    assert.equal(hiddenIn(text)?.startsWith('holds') ?? false, first !== undefined, JSON.stringify(text));
  }
});
