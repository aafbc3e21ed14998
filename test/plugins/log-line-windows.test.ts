/**
 * A guest's long log line is escaped a window at a time (worker/log-line.ts), each window judged
 * with 64 UTF-16 units of context before it. Every character the one rule names in the whole line
 * (hiddenCharactersIn) must come out escaped: more escaped, never less. A chain of couple emoji
 * (👨‍❤️‍👨‍❤️‍👨…) read from its middle pairs up in the other phase (👨‍❤️‍👨 at elements 2-4, not 0-2),
 * so the joiners between a couple and a lone heart, which the rule names, were left raw past the
 * first window of a 64 KiB line.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { hiddenCharactersIn } from '../../main/plugins/hidden-text.js';
import { MAX_LOG_BYTES } from '../../main/plugins/limits.js';
import { oneLogLine } from '../../main/plugins/worker/log-line.js';
import { loadFixtures } from '../helpers/wasm-fixtures.js';

const ZWJ = '\u200d';
const HEART = '\u2764\ufe0f';

/** How many of the joiners the rule names in `line` `out` holds raw (`out` is `line` with escapes; `line` holds no backslash). */
function namedJoinersLeftRaw(line: string, out: string): number {
  const named = new Set(hiddenCharactersIn(line).map((h) => h.index));
  let o = 0;
  let left = 0;
  for (let i = 0; i < line.length && o < out.length; i++) {
    if (out[o] === '\\') {
      o += out.startsWith('\\u{', o) ? out.indexOf('}', o) - o + 1 : out.startsWith('\\u', o) ? 6 : 2;
      if (line.codePointAt(i)! > 0xffff) i++;
      continue;
    }
    if (line[i] === ZWJ && named.has(i)) left++;
    o += 1;
  }
  return left;
}

it('a chain of emoji sequences cut by a window’s context is escaped as the whole line’s rule says, or more', () => {
  for (const person of ['\u{1F468}', '\u{1F469}\u{1F3FB}']) {
    const chain = Array.from({ length: 1200 }, (_, i) => (i % 2 === 0 ? person : HEART)).join(ZWJ);
    // Every alignment of the chain against the second window's context (it starts ~10,860 units
    // into a 64 KiB line): a few units into the chain, and ~900 units into it (a run longer than
    // the judging looks back for).
    const pads = [...Array.from({ length: 100 }, (_, i) => 10_780 + i), ...Array.from({ length: 12 }, (_, i) => 10_000 + i)];
    for (const pad of pads) {
      const line = 'a'.repeat(pad) + chain;
      const out = oneLogLine(line, MAX_LOG_BYTES);
      assert.equal(namedJoinersLeftRaw(line, out), 0, `${[...person].map((c) => c.codePointAt(0)!.toString(16)).join(' ')} chain after ${pad} letters: joiners the rule names left unescaped`);
    }
  }
});

it("a guest's line of such a chain reaches the log with every joiner the rule names escaped", async () => {
  const fx = await loadFixtures([{ name: 'chain', kind: 'wasi' }]);
  try {
    const line = 'a'.repeat(10_781) + Array.from({ length: 1200 }, (_, i) => (i % 2 === 0 ? '\u{1F468}' : HEART)).join(ZWJ);
    const handle = fx.registry.get('chain')!;
    assert.equal((await handle.invokeTool({ name: 'log', argumentsJson: line, callId: 'chain-1' })).ok, true);
    const logged = fx.logs.filter((l) => l.fields?.['module'] === 'chain' && l.fields?.['source'] !== 'host' && l.message.startsWith('aaaa')).map((l) => l.message);
    assert.equal(logged.length, 1);
    assert.equal(namedJoinersLeftRaw(line, logged[0]!), 0, 'joiners the rule names left unescaped in the logged line');
  } finally {
    await fx.close();
  }
});
