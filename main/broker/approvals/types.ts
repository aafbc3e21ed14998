import { z } from 'zod';

/** What the gateway sees in a request that a person should look at twice (computed, never the worker's word). */
export const DANGER_TAGS = [
  'recursive-delete',
  'pipe-to-shell',
  'privilege',
  'force-push',
  'history-rewrite',
  'recursive-chmod',
  'download-and-run',
  /** A program that runs a command given in its words (`nice x`, `ssh h x`, `python3 -c`), or an option or code that makes one run a command or write a file (`tar --to-command=…`, `git -c core.pager=…`, `find -exec`): no prefix rule names it (runs-command.ts). */
  'runs-command',
  'outside-workspace',
  'vcs-hook',
  'shell-dotfile',
  'ci-config',
  /** The gateway's own configuration: its rules file, the plugins' grants file, a plugins.lock, approvals.log (or a folder holding one). */
  'gateway-config',
  /** A written file that has another name (st_nlink > 1): the write changes it under that name too, wherever it lies. */
  'hard-link',
  'hidden-characters',
  /** Where a written path lands was not read (a `..` after an unreadable part; past the paths followed): fails closed. */
  'unread-landing',
] as const;
export const DangerTag = z.enum(DANGER_TAGS);
export type DangerTag = z.infer<typeof DangerTag>;

/**
 * What a rule matches: `exact` the whole command or path; `prefix` a command's first words
 * (program and subcommand, shown as `npm test *`), matching only a single simple command;
 * `glob` a write's path (`*` within a directory, `**` across directories, `?` one character),
 * relative to the asker's workspace, or absolute.
 */
export const ApprovalMatch = z.union([
  z.strictObject({ exact: z.string().min(1) }),
  z.strictObject({ prefix: z.string().min(1) }),
  z.strictObject({ glob: z.string().min(1) }),
]);
export type ApprovalMatch = z.infer<typeof ApprovalMatch>;

/**
 * A remembered decision: `agent` is the asker's role (or `'*'`, only when an embedder sets it);
 * `task` a root task id it ends with; `workspace` the asker's workspace (a real path) it holds in
 * only, as a person's "for this task" is: what they saw was the command in that folder.
 */
export const ApprovalRule = z.strictObject({
  id: z.string().min(1),
  effect: z.enum(['allow', 'deny']),
  kind: z.enum(['exec', 'write']),
  agent: z.string().min(1),
  match: ApprovalMatch,
  task: z.string().min(1).optional(),
  workspace: z.string().min(1).optional(),
});
export type ApprovalRule = z.infer<typeof ApprovalRule>;

/** A rule as an embedder adds it: the id is the store's. */
export const NewApprovalRule = ApprovalRule.omit({ id: true });
export type NewApprovalRule = z.infer<typeof NewApprovalRule>;

/** The root's standing answer, no one asked (`serve`/`run --approvals allow|deny`). */
export type ModeDecidedBy = 'mode:allow' | 'mode:deny';

/** Who decided: the person, a rule, the root's mode, or the gateway itself (no root handler, the pending limit, a text too long to read, the asker withdrew). */
export type DecidedBy = 'human' | `rule:${string}` | ModeDecidedBy | 'no-root' | 'limit' | 'too-long' | 'unpaired' | 'withdrawn';

/** One decision, as `approvals.log` holds it (one JSON line) and `onDecision` listeners get it. */
export interface AuditRow {
  /** ISO 8601, UTC. */
  time: string;
  /** The root task the asker works under, when it works under one. */
  task?: string;
  /** The asker's admitted name (`coder-0`). */
  agent: string;
  /** Its role: what rules are scoped to. */
  role: string;
  chain: string[];
  kind: 'exec' | 'write';
  /** The asker's workspace (a real path), when it has one: where the command ran or the path is resolved. */
  workspace?: string;
  /** What was asked; empty when it was refused unread (`by: too-long`): then `size` says how long it was. */
  command_or_path: string;
  /**
   * In `approvals.log` only, when `command_or_path` was longer than `AUDIT_TEXT_CHARS`: the row holds
   * its start, and this names the whole exactly (its characters and the SHA-256 of its UTF-8).
   */
  cut?: { chars: number; sha256: string };
  /** `by: too-long` only: the characters of the command or path and of the diff stat, one of them past `MAX_APPROVAL_TEXT_CHARS`. */
  size?: { command_or_path: number; diff_stat?: number };
  /** A write's path through the links on it, when it lands elsewhere than asked (the request's `lands`). */
  lands?: string;
  danger: DangerTag[];
  /**
   * The command lines the request's options and wrappers may run, as the person was shown them
   * (`!! tar may run: …`): the request's `runs`. In `approvals.log` each is cut to
   * `AUDIT_RUN_CHARS` code points (`chars` then says how many it had).
   */
  runs?: { program: string; line: string; chars?: number }[];
  /** How many more such lines the person was told of but not shown (the request's `runsMore`). */
  runsMore?: number;
  verdict: 'approved' | 'denied';
  by: DecidedBy;
  /** The rule the person asked to remember (`remember: 'task' | 'always'`), once added. */
  remembered?: string;
}
