/**
 * The most characters (UTF-16 code units) an approval's `command_or_path`, and its `diff_stat`,
 * may hold: about four screens of a terminal, more than a person reads before answering. Past it
 * the request is refused unread (no danger reading, no rule, no handler: neither the terminal
 * prompt nor the popover shows it), and its audit row keeps the sizes, not the text. A worker
 * could otherwise send a line as long as a frame (33 MiB): read on the main thread, and written
 * whole to approvals.log at every decision.
 */
export const MAX_APPROVAL_TEXT_CHARS = 16 * 1024;

/** The sizes of an approval's texts when one is past the limit; undefined when both may be read. */
export function oversized(commandOrPath: string, diffStat: string | undefined): { command_or_path: number; diff_stat?: number } | undefined {
  if (commandOrPath.length <= MAX_APPROVAL_TEXT_CHARS && (diffStat === undefined || diffStat.length <= MAX_APPROVAL_TEXT_CHARS)) return undefined;
  return { command_or_path: commandOrPath.length, ...(diffStat !== undefined ? { diff_stat: diffStat.length } : {}) };
}
