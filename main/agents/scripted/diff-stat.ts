/**
 * A diff stat as `+N -M`: the lines a line diff from `before` to `after` adds and removes (what
 * `git diff --stat` counts). Lines are compared whole; the longest common subsequence is kept.
 * Beyond `MAX_DIFF_CELLS` (texts too large to compare cheaply) every line of `before` counts as
 * removed and every line of `after` as added.
 */
export const MAX_DIFF_CELLS = 4_000_000;

/**
 * Texts longer than this (in characters, either one) are not split a string a line: their lines are
 * counted, every line of `before` removed and every line of `after` added. A text of line breaks
 * split whole is a string a byte (30 MB of them ended a worker's heap).
 */
export const MAX_DIFF_TEXT_CHARS = 4 * 1024 * 1024;

export function diffStat(before: string | undefined, after: string): string {
  if ((before?.length ?? 0) > MAX_DIFF_TEXT_CHARS || after.length > MAX_DIFF_TEXT_CHARS) return `+${countLines(after)} -${countLines(before ?? '')}`;
  const a = lines(before ?? '');
  const b = lines(after);
  const common = commonLines(a, b);
  return `+${b.length - common} -${a.length - common}`;
}

/** What `lines(text).length` would be, without making the lines. */
function countLines(text: string): number {
  if (text === '') return 0;
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return text.endsWith('\n') ? count : count + 1;
}

function lines(text: string): string[] {
  if (text === '') return [];
  const parts = text.split('\n');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** Length of the longest common subsequence of lines (after trimming the shared head and tail). */
function commonLines(a: string[], b: string[]): number {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  if (x.length === 0 || y.length === 0) return head + tail;
  if (x.length * y.length > MAX_DIFF_CELLS) return head + tail;
  let previous = new Uint32Array(y.length + 1);
  let current = new Uint32Array(y.length + 1);
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      current[j] = x[i - 1] === y[j - 1] ? previous[j - 1]! + 1 : Math.max(previous[j]!, current[j - 1]!);
    }
    [previous, current] = [current, previous];
  }
  return head + tail + previous[y.length]!;
}
