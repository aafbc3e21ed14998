/**
 * The terminal as the root's human: approvals and questions shown with who asks and answered on the
 * terminal (or per `--approvals`), and a root call's progress as it happens. Used by `run` (and
 * `serve`'s prompt).
 */
export { APPROVALS_MODES, defaultApprovalsMode, isApprovalsMode, type ApprovalsMode } from './approvals-mode.js';
export { attachTerminalRoot, type GrantDesk, type TerminalRoot, type TerminalRootOptions } from './terminal-root.js';
export { NoAnswer, TerminalPrompter, type PrompterOptions } from './prompter.js';
export { ProgressPrinter, type ProgressPrinterOptions } from './progress.js';
export { LineQueue } from './line-queue.js';
export { describeGrant, grantDetails } from './describe-grant.js';
export { approvalDetails, describeApproval, describeAsker, describeOffer, describeQuestions, shown, shownOneLine } from './describe.js';
export { Screen, writer } from './screen.js';
export { fitColumns, printable } from './safe-text.js';
export { canReadKeys, ECHOED_ENTER, TypedLines, type TypedLine } from './typed-lines.js';
