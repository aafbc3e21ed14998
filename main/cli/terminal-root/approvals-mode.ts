/**
 * `--approvals prompt|deny|allow`: how the terminal root answers approvals. `prompt` shows each
 * approval (and each question) on the terminal and reads the answer; `deny` and `allow` answer every
 * approval at once (and say so on the terminal), and leave questions unanswered: a question that
 * reaches the root then fails the call that asked it, quoting it (the broker's rule: nobody guesses).
 */
export const APPROVALS_MODES = ['prompt', 'deny', 'allow'] as const;
export type ApprovalsMode = (typeof APPROVALS_MODES)[number];

export function isApprovalsMode(value: string): value is ApprovalsMode {
  return (APPROVALS_MODES as readonly string[]).includes(value);
}

/** The default: `prompt` when there is a terminal to ask on (stdin a TTY), else `deny`. */
export function defaultApprovalsMode(stdin: { isTTY?: boolean } = process.stdin): ApprovalsMode {
  return stdin.isTTY === true ? 'prompt' : 'deny';
}
