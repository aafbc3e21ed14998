/**
 * A table of the well-known characters drawn as nothing (the usual "invisible characters" lists),
 * each refused in a tool description and named by the display rule: added one at a time, the
 * class fails open, so the table keeps it honest. U+1D159 MUSICAL SYMBOL NULL NOTEHEAD (category
 * So, not default-ignorable, an empty glyph) was served and shown raw. (The no-break spaces are
 * drawn as spaces, and allowed in descriptions: hidden-text.ts.)
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { firstHidden } from '../../main/display/index.js';
import { checkedTools } from '../../main/plugins/handle/tool-schemas.js';

const BLANK = [
  0x00ad, 0x034f, 0x061c, 0x115f, 0x1160, 0x17b4, 0x17b5, 0x180e, 0x2000, 0x200a, 0x200b, 0x200c, 0x200d, 0x200e, 0x200f,
  0x205f, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x206a, 0x206f, 0x2800, 0x3000, 0x3164, 0xfe0f, 0xfeff, 0xffa0, 0xfffc,
  0x16fe4, 0x1d159, 0x1d173, 0x1d17a, 0xe0020, 0xe007f, 0xe0100,
];

it('every well-known blank character is refused in a tool description and named when shown', () => {
  const tool = (description: string) => [{ name: 'count', description, parametersSchema: '{"type":"object"}' }];
  const served = BLANK.filter((cp) => {
    try {
      checkedTools(tool(`Counts${String.fromCodePoint(cp)} words`) as never);
      return true;
    } catch {
      return false;
    }
  });
  const shownRaw = BLANK.filter((cp) => firstHidden(`a${String.fromCodePoint(cp)}b`) === undefined);
  const hex = (cps: number[]): string => cps.map((cp) => `U+${cp.toString(16).toUpperCase()}`).join(', ');
  assert.deepEqual(hex(served), '', 'served in a description');
  assert.deepEqual(hex(shownRaw), '', 'shown raw');
});
