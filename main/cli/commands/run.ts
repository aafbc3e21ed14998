import { bundledAgents, detectWorkspace, pruneWorktreesAtStart } from '../../agents/bundled.js';
import { Broker, RootCallError, RootTransport, type RootInvokeResult } from '../../broker/index.js';
import { failure } from '../failure.js';
import { decodeTaskText } from '../../shell/task-text.js';
import { attachTerminalRoot, defaultApprovalsMode, printable, ProgressPrinter, writer, type ApprovalsMode } from '../terminal-root/index.js';

export interface RunOptions {
  agent: string;
  prompt: string;
  approvals?: ApprovalsMode | undefined;
  json: boolean;
}

export interface RunIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
}

/** Exit code of a task that did not complete; 130 when Ctrl-C cancelled it. */
export const NOT_COMPLETED_EXIT = 1;

/**
 * `chatty-gateway run <agent> <prompt…> [--approvals prompt|deny|allow] [--json]`: one task, in
 * one process: a broker of its own with the bundled agents (`local-coder`, `local-reviewer`, in git
 * worktrees when the working directory is a git repository), the terminal as the root's human
 * (approvals and questions with who asks; `--approvals` defaults to `prompt` when stdin is a TTY,
 * `deny` otherwise), the progress on stderr as it happens and the artifact text on stdout as it
 * streams (`--json`: only the `agent.invoke` result object, on stdout, at the end). Resolves to 0
 * when the task completed, 1 when it did not, 130 when Ctrl-C cancelled it (a second Ctrl-C ends
 * the process at once); an unknown agent or a refused call is one stderr line and 1. The prompt is
 * read as a line at `serve`'s prompt is (`decodeTaskText`: `\n` a new line, `\\` a backslash).
 */
export async function runRun(options: RunOptions, io: RunIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const mode = options.approvals ?? defaultApprovalsMode(io.stdin);
  // Every stderr line may quote a worker (a failure reason, mail, its stderr in a broker line): made printable.
  const say = (line: string): void => void io.stderr.write(`chatty-gateway: ${printable(line)}\n`);
  // The artifact text as it came when stdout is a file or a pipe; on a terminal, made printable.
  const text = io.stdout.isTTY === true ? writer((chunk) => io.stdout.write(printable(chunk))) : io.stdout;
  let broker: Broker;
  try {
    const workspace = await detectWorkspace(process.cwd());
    await pruneWorktreesAtStart(workspace, say); // what a killed gateway or run left in this repository
    broker = new Broker({
      root: { workspaceRoot: workspace.workspaceRoot, ...(workspace.kind === 'git' ? { baseBranch: workspace.baseBranch } : {}) },
      log: (line) => say(`broker: ${line}`),
    });
    for (const agent of bundledAgents({ workspace })) broker.addVirtualAgent(agent.name, agent.runner, agent.card);
  } catch (err) {
    return failure(err);
  }
  const root = new RootTransport(broker);
  const terminal = attachTerminalRoot(root, { approvals: mode, input: io.stdin, output: io.stderr });
  const progress = new ProgressPrinter(options.agent, { output: io.stderr, ...(options.json ? {} : { text }) });

  const cancel = new AbortController();
  const onSigint = (): void => {
    if (cancel.signal.aborted) process.exit(130);
    io.stderr.write('\n');
    say('cancelling (Ctrl-C again to quit at once)');
    cancel.abort(new Error('cancelled with Ctrl-C'));
  };
  process.on('SIGINT', onSigint);

  let result: RootInvokeResult | undefined;
  let code: number;
  try {
    result = await root.invoke(options.agent, decodeTaskText(options.prompt), { onProgress: progress.event, signal: cancel.signal });
    progress.finish();
    code = result.success ? 0 : result.cancelled_by_user ? 130 : NOT_COMPLETED_EXIT;
  } catch (err) {
    code = err instanceof RootCallError ? await refused(err, root, say) : failure(err);
  } finally {
    terminal.close();
    await broker.stop().catch((err: unknown) => say(`stopping the broker: ${(err as Error)?.message ?? String(err)}`));
    process.off('SIGINT', onSigint);
  }

  if (result) {
    if (options.json) io.stdout.write(`${JSON.stringify(result)}\n`);
    else {
      for (const message of result.messages) say(`mail: ${message}`);
      if (!result.success) say(`${options.agent} did not complete: ${result.error ?? (result.cancelled_by_user ? 'cancelled' : 'no reason given')}`);
    }
  }
  return code;
}

/** A refused call (an unknown agent: with the names there are) is one stderr line, exit 1. */
async function refused(err: RootCallError, root: RootTransport, say: (line: string) => void): Promise<number> {
  const known = err.error.kind === 'unknown_agent' ? ` (the agents here: ${(await root.listAgents()).map((a) => a.name).join(', ')})` : '';
  say(`${err.message}${known}`);
  return 1;
}
