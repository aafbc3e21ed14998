/**
 * A diff stat for a write approval, in lines, the way `git diff --stat` counts them: `new file, +3`
 * or `+2 -1`. Lines common to the start and the end of the old and new text are not counted; what is
 * between counts as removed and added (a change in the middle is one line out, one in, as git
 * would say for a replaced block).
 */
export function diffStat(before: string | undefined, after: string): string {
  const next = lines(after);
  if (before === undefined) return `new file, +${next.length}`;
  const prev = lines(before);
  let head = 0;
  while (head < prev.length && head < next.length && prev[head] === next[head]) head++;
  let tail = 0;
  while (tail < prev.length - head && tail < next.length - head && prev[prev.length - 1 - tail] === next[next.length - 1 - tail]) tail++;
  const removed = prev.length - head - tail;
  const added = next.length - head - tail;
  return removed === 0 && added === 0 ? 'no change' : `+${added} -${removed}`;
}

function lines(text: string): string[] {
  if (text === '') return [];
  const parts = text.split('\n');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}
