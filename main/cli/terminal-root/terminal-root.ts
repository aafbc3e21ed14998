import type { ApprovalRequest, ModeDecision, RootTransport } from '../../broker/index.js';
import type { ApprovalsMode } from './approvals-mode.js';
import type { PluginGrants } from '../../plugins/grants/index.js';
import { approvalDetails, describeApproval, describeAsker, shownOneLine } from './describe.js';
import type { LineQueue } from './line-queue.js';
import { TerminalPrompter } from './prompter.js';
import { printable } from './safe-text.js';

export interface TerminalRootOptions {
  /** How approvals are answered (see `ApprovalsMode`). */
  approvals: ApprovalsMode;
  /** Where answers are read in `prompt` mode (default stdin; never read in the other modes). */
  input?: NodeJS.ReadableStream;
  /** Where prompts and notes go (default stderr). */
  output?: NodeJS.WritableStream;
  /** What each line starts with (default `chatty-gateway: `). */
  prefix?: string;
  /** A line queue shared with another reader of the input (see `PrompterOptions.lines`). */
  lines?: LineQueue;
  /** Where "always" approval rules are kept (`serve --approvals-file`): the prompt offers `a` only then. */
  alwaysFile?: string | undefined;
  /**
   * The plugins' grant desk (`registry.grants`) to answer too, in `prompt` mode: each capability
   * request is shown and answered here, in turn with the approvals. In `allow`/`deny` mode the desk
   * is left alone: the registry's own grants mode answers without asking (`serve` sets it from
   * `--approvals`: `allow` grants for this run, `deny` refuses), so it is not decided twice.
   */
  grants?: GrantDesk | undefined;
  /** On a terminal, each prompt's guard time in ms (default `GUARD_MS`, 600: see `PrompterOptions.guardMs`). */
  guardMs?: number | undefined;
  /** How a denied grant says to give it later (`serve`: the command with its own `--modules-dir` and `--approvals-file`). Default `chatty-gateway plugin grant NAME`. */
  grantCommand?: ((plugin: string) => string) | undefined;
}

/** What the terminal root needs of a `PluginGrants` desk: to be its one handler. */
export type GrantDesk = Pick<PluginGrants, 'onRequest'>;

export interface TerminalRoot {
  /** Stops answering (the handlers are removed) and stops reading the input. */
  close(): void;
}

/**
 * Makes the terminal the root's human: sets `root`'s approval handler (and, in `prompt` mode, its
 * question handler) and shows mail posted to the root. In `prompt` mode each approval and question
 * is shown with who asks and the answer read from `input`; in `allow`/`deny` mode each approval is
 * answered at once and a line says so; questions then have no handler (the call that asked fails,
 * quoting the question). With `grants`, in `prompt` mode, the plugins' capability requests are asked too.
 */
export function attachTerminalRoot(root: RootTransport, options: TerminalRootOptions): TerminalRoot {
  const out = options.output ?? process.stderr;
  // A line may quote a worker (what it asks to run, its mail): made printable, whatever the output.
  const output = { write: (line: string): boolean => out.write(printable(line)) };
  const prefix = options.prefix ?? 'chatty-gateway: ';
  const off: (() => void)[] = [];
  let prompter: TerminalPrompter | undefined;
  if (options.approvals === 'prompt') {
    const p = (prompter = new TerminalPrompter({ input: options.input ?? process.stdin, output: out, prefix, ...(options.lines ? { lines: options.lines } : {}), alwaysFile: options.alwaysFile, grantCommand: options.grantCommand, guardMs: options.guardMs }));
    off.push(root.onApproval((request, signal) => p.approve(request, signal)));
    off.push(root.onQuestion((request, signal) => p.ask(request, signal)));
    if (options.grants) off.push(options.grants.onRequest((request, signal) => p.grant(request, signal)));
  } else {
    // No one is asked: the audit row names the mode (`by: mode:allow|deny`), not a person.
    const decision: ModeDecision = options.approvals === 'allow' ? { verdict: 'approved', by: 'mode:allow' } : { verdict: 'denied', by: 'mode:deny' };
    off.push(
      root.onApproval((request: ApprovalRequest) => {
        output.write(`${prefix}${decision.verdict} (--approvals ${options.approvals}): ${describeAsker(request.asker)} asks to ${describeApproval(request)}\n`);
        for (const line of approvalDetails(request)) output.write(`${line}\n`);
        return decision;
      }),
    );
  }
  // The sender's name is a worker's too: one line, hidden characters as code points.
  off.push(root.onMessage((message) => output.write(`${prefix}message from ${shownOneLine(message.from)}: ${message.text.replaceAll('\n', '\n    ')}\n`)));
  return {
    close() {
      for (const unsubscribe of off.splice(0)) unsubscribe();
      prompter?.close();
    },
  };
}

