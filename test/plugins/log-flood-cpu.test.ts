/**
 * A guest's log line is made one visible line (worker/log-line.ts) in the module's worker, and
 * again by the main thread's logger: its cost must follow what the line's cap keeps, not what
 * the guest wrote. A 64 KiB line of NULs (the first 64 KiB of a fresh memory) escapes to 384 KiB
 * of which 64 KiB is kept: escaping all of it cost ~150-180 ms of CPU a line, a call's 16 lines
 * ~4.5 s across worker and main thread (hostile.test.ts's log-flood ran past its 60 s call limit
 * at load 23-38). CPU time, not wall clock: the machine running this is loaded.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hiddenCharactersIn } from '../../main/plugins/hidden-text.js';
import { MAX_LOG_BYTES, MAX_LOG_BYTES_PER_CALL } from '../../main/plugins/limits.js';
import { oneLogLine } from '../../main/plugins/worker/log-line.js';
import { cpuDuringSync } from '../helpers/cpu-meter.js';

/** The most 64 KiB lines a call may log (its 1 MiB budget). */
const LINES_PER_CALL = MAX_LOG_BYTES_PER_CALL / MAX_LOG_BYTES;

const FLOODS: [string, string][] = [
  ['NULs', '\0'.repeat(65536)],
  ['ESCs', '\x1b'.repeat(65536)],
  ['zero-width spaces', '\u200b'.repeat(21845)],
  ['zero-width joiners', '\u200d'.repeat(21845)],
  ['tag characters', '\u{e0069}'.repeat(16384)],
  ['no-break spaces', '\u00a0'.repeat(32768)],
  ['letters with combining marks (nothing to escape)', 'a\u0301'.repeat(21845)],
  // Runs of combining marks: the joiner rule's lookbehind scanned back over the run at each of its
  // positions (O(k²) a window: ~7 s for one line of U+FE0F, itself a mark and hidden).
  ['variation selectors (marks, each escaped)', '\ufe0f'.repeat(21845)],
  ['combining grapheme joiners (marks, each escaped)', '\u034f'.repeat(21845)],
];

/** Every character escaped, nothing cut: the rule the capped line is a prefix of. */
function escapedWhole(text: string): string {
  const at = new Map<number, string>();
  for (const m of text.matchAll(/[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g)) at.set(m.index, m[0]);
  for (const { index, char } of hiddenCharactersIn(text)) at.set(index, char);
  let out = '';
  let from = 0;
  for (const index of [...at.keys()].sort((a, b) => a - b)) {
    const char = at.get(index)!;
    const code = char.codePointAt(0)!;
    out += text.slice(from, index);
    out += char === '\n' ? '\\n' : char === '\r' ? '\\r' : code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
    from = index + char.length;
  }
  return out + text.slice(from);
}

describe('a log line costs what its cap keeps', () => {
  // Warmed once on short lines (the regular expressions compiled, the code optimized): what is
  // measured is a line's own cost, not the first call's.
  for (const [, line] of FLOODS) for (let i = 0; i < 4; i++) oneLogLine(line.slice(0, 4096), 4096);

  it('escapes a 64 KiB line of NULs for no more than it can keep', () => {
    const { result, cpuMs } = cpuDuringSync(() => oneLogLine('\0'.repeat(65536), 65536));
    assert.ok(Buffer.byteLength(result) <= 65536);
    assert.equal(result, '\\u0000'.repeat(10922)); // whole escapes only: 65,532 bytes
    assert.ok(cpuMs < 40, `${cpuMs} ms of CPU for one line`);
  });

  for (const [name, line] of FLOODS) {
    it(`a call's ${LINES_PER_CALL} lines of 64 KiB of ${name} cost a bounded CPU`, () => {
      const { result, cpuMs } = cpuDuringSync(() => {
        let last = '';
        for (let i = 0; i < LINES_PER_CALL; i++) last = oneLogLine(line, MAX_LOG_BYTES);
        return last;
      });
      assert.ok(Buffer.byteLength(result) <= MAX_LOG_BYTES);
      assert.ok(escapedWhole(line).startsWith(result), 'the kept line is a prefix of the line escaped whole');
      assert.ok(cpuMs < LINES_PER_CALL * 40, `${cpuMs.toFixed(0)} ms of CPU for ${LINES_PER_CALL} lines`);
    });
  }

  it('a mixed line is its whole escaping cut before the first piece that does not fit', () => {
    const alphabet = ['a', 'é', '\0', '\n', '\u202e', '\u200b', '\u{e0041}', '\u00a0', '\u{1f468}\u200d\u{1f469}\u200d\u{1f467}', '\u0645\u200c\u06cc', '\u{1f600}', '\t', '\x9b'];
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648);
    for (let round = 0; round < 40; round++) {
      let line = '';
      const parts = next() % 30000;
      for (let i = 0; i < parts; i++) line += alphabet[next() % alphabet.length];
      const cap = [64, 1000, 4096, MAX_LOG_BYTES][round % 4]!;
      const whole = escapedWhole(line);
      const kept = oneLogLine(line, cap);
      assert.ok(Buffer.byteLength(kept) <= cap, `round ${round}: ${Buffer.byteLength(kept)} bytes over ${cap}`);
      assert.ok(whole.startsWith(kept), `round ${round}: not a prefix of the line escaped whole`);
      if (kept.length < whole.length) assert.ok(Buffer.byteLength(kept) > cap - 10, `round ${round}: cut at ${Buffer.byteLength(kept)} of ${cap} bytes`);
    }
  });
});
