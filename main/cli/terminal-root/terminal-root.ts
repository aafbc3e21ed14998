import type { ApprovalRequest, ModeDecision, RootTransport } from '../../broker/index.js';
import type { ApprovalsMode } from './approvals-mode.js';
import type { PluginGrantDecision, PluginGrantRequest, PluginGrants } from '../../plugins/grants/index.js';
import { approvalDetails, describeApproval, describeAsker, shownOneLine } from './describe.js';
import { describeGrant, grantDetails } from './describe-grant.js';
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
   * The plugins' grant desk (`registry.grants`) to answer too: in `prompt` mode each capability
   * request is shown and answered here (in turn with the approvals); in `allow`/`deny` mode it is
   * granted or denied at once, and a line says so.
   */
  grants?: GrantDesk | undefined;
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
 * quoting the question). With `grants`, the plugins' capability requests are answered the same way.
 */
export function attachTerminalRoot(root: RootTransport, options: TerminalRootOptions): TerminalRoot {
  const out = options.output ?? process.stderr;
  // A line may quote a worker (what it asks to run, its mail): made printable, whatever the output.
  const output = { write: (line: string): boolean => out.write(printable(line)) };
  const prefix = options.prefix ?? 'chatty-gateway: ';
  const off: (() => void)[] = [];
  let prompter: TerminalPrompter | undefined;
  if (options.approvals === 'prompt') {
    const p = (prompter = new TerminalPrompter({ input: options.input ?? process.stdin, output: out, prefix, ...(options.lines ? { lines: options.lines } : {}), alwaysFile: options.alwaysFile }));
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
    if (options.grants) off.push(options.grants.onRequest((request) => answerGrantByMode(request, options.approvals as 'allow' | 'deny', prefix, output)));
  }
  off.push(root.onMessage((message) => output.write(`${prefix}message from ${message.from}: ${message.text.replaceAll('\n', '\n    ')}\n`)));
  return {
    close() {
      for (const unsubscribe of off.splice(0)) unsubscribe();
      prompter?.close();
    },
  };
}

/** `--approvals allow|deny` answers a plugin's capability request at once, with the request on the terminal and how to give a denied grant. */
function answerGrantByMode(request: PluginGrantRequest, mode: 'allow' | 'deny', prefix: string, output: { write(line: string): boolean }): PluginGrantDecision {
  const decision: PluginGrantDecision = mode === 'allow' ? 'granted' : 'denied';
  output.write(`${prefix}${decision} (--approvals ${mode}): ${describeGrant(request)}\n`);
  for (const line of grantDetails(request)) output.write(`${line}\n`);
  if (decision === 'denied') output.write(`  not served; grant it with: chatty-gateway plugin grant ${shownOneLine(request.plugin)}\n`);
  return decision;
}
