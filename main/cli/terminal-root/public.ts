/**
 * The package's `./terminal` subpath: what an embedder composes with to make a terminal the root's
 * human. `attachTerminalRoot` and its options; the approvals modes; `LineQueue`, for an embedder
 * that reads the same input itself (the `lines` option), as `serve`'s task prompt does. The rest
 * of this folder (the prompter, the screen, the printable-text rule) is the CLI's own (index.ts).
 */
export { APPROVALS_MODES, defaultApprovalsMode, type ApprovalsMode } from './approvals-mode.js';
export { attachTerminalRoot, type GrantDesk, type TerminalRoot, type TerminalRootOptions } from './terminal-root.js';
export { LineQueue, type NextOptions } from './line-queue.js';
