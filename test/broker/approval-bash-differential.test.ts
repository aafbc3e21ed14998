/**
 * The line reader (shell-text.ts, then shell-quote) against real bash: lines built from the
 * pieces where a reader can part ways with bash (quotes, comments, heredocs, `${…}`, `$((…))`,
 * `case`, backticks, continued lines), each ending in `; X`. Whenever bash runs `X`, a deny rule
 * on `X` must say denied or maybe, never "not covered": a reader that takes a `#` for a comment,
 * or a quote for one, where bash does not, would let a denied command through unasked. The pieces
 * are drawn from a fixed seed, so a failure names a line that fails again.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { deniedBy } from '../../main/broker/approvals/match.js';

const PIECES = ["'", '"', '#', '`', '$(', ')', '(', '${x:-', '}', '\\', '\n', '<<E', '\nE\n', 'case a in a)', ';;', 'esac', '$((', '))', ' ', ';', "$'", 'echo ', ' #', '$[', ']', '<(', '&&', '|', '{ ', ' }', '<<-E', '\t', 'cat ', "<<'E'", '\\\n'];

/**
 * Openers and closers inside closed quotes (`'$('`, "\`"): bash opens nothing there. A reader that
 * found them again in its own output took every command between two of them for a nested line
 * (review finding A1); PIECES alone never closes a quote around an opener.
 */
const QUOTED = ["'$('", "')'", "'`'", '"\\`"', "a'<('", "'>('", "$'\\'$('"];

/** A small linear congruential generator: the same lines on every run. */
function lines(seed: number, count: number, pieces: readonly string[] = PIECES, shape = { afterX: '', highBits: false }): string[] {
  let state = seed;
  const next = (n: number): number => {
    state = (state * 1103515245 + 12345) % 2147483648;
    // The low bits of this generator repeat with a short period; the quoted sample draws from the high ones.
    return (shape.highBits ? Math.floor(state / 65536) : state) % n;
  };
  return Array.from({ length: count }, () => {
    let line = 'echo ';
    for (let k = 2 + next(6); k > 0; k--) line += pieces[next(pieces.length)];
    line += ' ; X' + shape.afterX;
    for (let k = 0; k < next(4); k++) line += pieces[next(pieces.length)]; // the bound drawn again each time
    return line;
  });
}

const dir = mkdtempSync(join(tmpdir(), 'approval-bash-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Whether bash runs `X` when it runs `line` (X a function that only prints; stdin empty). */
function bashRunsX(line: string): boolean {
  const script = join(dir, 'line.sh');
  writeFileSync(script, `X() { echo __X_RAN__; }\n${line}\n`);
  const run = spawnSync('bash', [script], { input: '', timeout: 5_000, encoding: 'utf8' });
  return run.stdout.includes('__X_RAN__');
}

/** The lines of `sample` whose X bash runs but no deny rule on X covers, and how many ran X. */
function missedIn(sample: readonly string[]): { missed: string[]; ran: number } {
  const missed: string[] = [];
  let ran = 0;
  for (const line of sample) {
    if (!bashRunsX(line)) continue;
    ran++;
    if (deniedBy({ prefix: 'X' }, { kind: 'exec', command_or_path: line, workspace: dir }) === false) missed.push(line);
  }
  return { missed, ran };
}

test('whenever bash runs X, a deny rule on X covers the line (denied or maybe), over 800 lines of mixed quoting', () => {
  const { missed, ran } = missedIn(lines(1, 800));
  assert.ok(ran > 40, `bash ran X in only ${ran} lines: the sample proves little`);
  assert.deepEqual(missed, [], 'lines whose X bash runs but no deny rule on X covers');
});

test('the same over 200 lines with openers inside closed quotes', () => {
  // `… ; X ; echo <pieces>`: an opener quoted before X, a closer quoted after it (found the quoted `'>('` … `')'` of A1).
  const { missed, ran } = missedIn(lines(2, 200, [...QUOTED, ' ', ';', "'", '"', '#', '`', ')'], { afterX: ' ; echo ', highBits: true }));
  assert.ok(ran > 20, `bash ran X in only ${ran} lines: the sample proves little`);
  assert.deepEqual(missed, [], 'lines whose X bash runs but no deny rule on X covers');
});
