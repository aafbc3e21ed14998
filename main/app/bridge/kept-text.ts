/**
 * Characters of timeline text the host keeps per task (and at most in one entry): a worker's step,
 * text chunk or failure message is its own words, up to a frame (33 MB), and the host keeps the
 * last MAX_ENDED_TASKS tasks for a reloaded window's snapshot.
 */
export const MAX_TEXT_PER_TASK = 1024 * 1024;

/** Characters of a failed task's error kept in its view (the whole, cut the same way, is its `result` entry). */
export const MAX_ERROR_CHARS = 16 * 1024;

/**
 * `text` if it is at most `max` characters; else its head and `… (N characters not kept)`, at most
 * `max` in all, never splitting a surrogate pair. The window is sent what is kept, so a reloaded
 * window's snapshot reads the same as what it saw.
 */
export function keptText(text: string, max: number): string {
  if (text.length <= max) return text;
  // The count is at most text.length: its digits bound the note's length.
  let keep = max - `… (${text.length} characters not kept)`.length;
  const code = text.charCodeAt(keep - 1);
  if (code >= 0xd800 && code <= 0xdbff) keep--;
  return `${text.slice(0, Math.max(0, keep))}… (${text.length - Math.max(0, keep)} characters not kept)`;
}
