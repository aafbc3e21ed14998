import { spawn } from 'node:child_process';
import { StderrTail } from '../../fabric/admission/stderr-tail.js';
import { signalWorker } from '../../fabric/admission/worker-group.js';
import { hasExited } from './end-child.js';
import { brokerGitEnv } from './worker-env.js';

/** How long one of the broker's git commands may run before it is ended (with what it started): 5 minutes. */
export const GIT_TIMEOUT_MS = 5 * 60_000;

/** How long git's pipes may stay open after git has exited (a hook's background process holding them) before they are let go of. */
const EXIT_GRACE_MS = 1_000;

/** What the broker keeps of one git command's stdout: past it, the command is ended. */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

/**
 * What the broker keeps of one git command's stderr: its last 64 KiB (git's own complaint comes
 * last, after what its hooks wrote), in one ring. A hook a worker planted writes to that stderr,
 * and a chunk kept as it came cost a buffer per read: written a byte per read, ~130 bytes a byte.
 */
const STDERR_KEPT_BYTES = 64 * 1024;

/** A git command that failed: its arguments, exit code and what it wrote to stderr; `ended` says why the broker ended it, if it did. */
export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly code: number | string | null,
    readonly stderr: string,
    readonly ended?: string,
  ) {
    const what = ended === undefined ? `failed${code === null ? '' : ` (${code})`}` : ended;
    super(`git ${args.join(' ')} ${what}${stderr ? `: ${stderr}` : ''}`);
  }
}

export interface GitOptions {
  /** The git executable (default `git`, from PATH). */
  command?: string;
  /** Ended (its whole process group, SIGKILL) past this, and rejected (default `GIT_TIMEOUT_MS`). */
  timeoutMs?: number;
  /**
   * Whether the repository's hooks run (default: not, `core.hooksPath=/dev/null`). A worker can
   * write its repository's hooks and config (every worktree shares them): the broker's own
   * bookkeeping (a release's `branch -D`, which runs `reference-transaction`) runs none of them.
   */
  hooks?: boolean;
  /** Ends it (its whole process group, SIGKILL) and rejects when it aborts: the start it serves was given up. */
  signal?: AbortSignal;
}

/**
 * Runs `git <args>` in `cwd` (an argument array, never a shell) and resolves to its stdout. Its
 * environment is a worker's (`brokerGitEnv`): the broker's repository-local variables (`GIT_DIR`…)
 * are not passed (`cwd` alone says which repository), nor the gateway's own credential (a hook a
 * worker planted would read it). Prompts are off (nothing here may wait for a terminal), and what
 * git starts (a hook, a filter: a worker can configure either) can neither hold the broker nor
 * reach the person:
 * - git runs in a session of its own (setsid, as workers do), so a hook has no controlling
 *   terminal of the gateway's (no `/dev/tty` to push keys into `serve`'s prompt);
 * - past `timeoutMs` its process group is SIGKILLed and the call rejects;
 * - it is done when its pipes close, or 1 s after git's exit: a process a hook left in the
 *   background holding git's stdout or stderr is not waited for (the pipes are then let go of).
 */
export function git(args: readonly string[], cwd: string, options: GitOptions = {}): Promise<string> {
  const { command = 'git', timeoutMs = GIT_TIMEOUT_MS, hooks = false, signal } = options;
  const env = brokerGitEnv(process.env);
  const argv = hooks ? [...args] : ['-c', 'core.hooksPath=/dev/null', ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [];
    const err = new StderrTail(child.stderr, STDERR_KEPT_BYTES);
    let outBytes = 0;
    let ended: string | undefined; // why the broker ended it
    let settled = false;
    const endGroup = (why: string) => {
      if (ended !== undefined || hasExited(child)) return;
      ended = why;
      signalWorker(child, 'SIGKILL'); // the leader still runs (checked above): the group is git's
    };
    const timer = setTimeout(() => endGroup(`did not end within ${timeoutMs} ms, so it was ended (with the hooks and filters it ran)`), timeoutMs);
    const onAbort = () => endGroup('was ended: what it was run for was given up');
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > MAX_OUTPUT_BYTES) endGroup(`wrote more than ${MAX_OUTPUT_BYTES} bytes to its stdout, so it was ended`);
      else out.push(chunk);
    });
    const settle = (code: number | null, exitSignal: NodeJS.Signals | null, spawnError?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      for (const pipe of [child.stdout, child.stderr]) if (!pipe.destroyed) pipe.destroy();
      const stderr = err.text().trim();
      if (ended !== undefined) reject(new GitError(args, null, stderr, ended));
      else if (spawnError) reject(new GitError(args, (spawnError as NodeJS.ErrnoException).code ?? null, spawnError.message));
      else if (code !== 0) reject(new GitError(args, code ?? exitSignal, stderr));
      else resolve(Buffer.concat(out).toString());
    };
    child.once('error', (e) => settle(null, null, e));
    child.once('close', (code, exitSignal) => settle(code, exitSignal));
    // Its pipes close once git and whatever it started have exited; a process a hook left in the
    // background may hold them for ever, so they are not waited for long after git's own exit.
    child.once('exit', (code, exitSignal) => setTimeout(() => settle(code, exitSignal), EXIT_GRACE_MS).unref());
  });
}
