import { spawn } from 'node:child_process';

/** The most output of one command the model is shown (the start and the end, the middle cut). */
export const MAX_COMMAND_OUTPUT = 32 * 1024;
/** How long a command has after SIGTERM (timeout or cancel) before SIGKILL. */
const KILL_GRACE_MS = 2_000;

export interface CommandResult {
  /** The exit code, or null when a signal ended it. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** stdout and stderr interleaved as they came, cut to `MAX_COMMAND_OUTPUT`. */
  output: string;
  timedOut: boolean;
}

export interface RunCommandOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal: AbortSignal;
}

/**
 * Runs `command` with `/bin/sh -c` in `cwd`, in a process group of its own so that the timeout or
 * the task's cancellation ends everything it started (SIGTERM to the group, SIGKILL after 2 s).
 * stdin is empty. Rejects only if the shell cannot be started, or with the signal's reason once the
 * task is cancelled (after the group is gone).
 */
export function runCommand(command: string, options: RunCommandOptions): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    if (options.signal.aborted) return reject(options.signal.reason);
    const child = spawn('/bin/sh', ['-c', command], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const chunks: Buffer[] = [];
    let size = 0;
    let dropped = 0;
    let tail: Buffer[] = [];
    let tailSize = 0;
    const half = MAX_COMMAND_OUTPUT / 2;
    const collect = (chunk: Buffer) => {
      if (size < half) {
        const take = chunk.subarray(0, half - size);
        chunks.push(take);
        size += take.length;
        chunk = chunk.subarray(take.length);
      }
      if (chunk.length === 0) return;
      tail.push(chunk);
      tailSize += chunk.length;
      while (tailSize - (tail[0]?.length ?? 0) >= half) {
        const first = tail.shift()!;
        tailSize -= first.length;
        dropped += first.length;
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);

    let timedOut = false;
    let killTimer: NodeJS.Timeout | undefined;
    const endGroup = () => {
      signalGroup(child.pid, 'SIGTERM');
      killTimer ??= setTimeout(() => signalGroup(child.pid, 'SIGKILL'), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      endGroup();
    }, options.timeoutMs);
    options.signal.addEventListener('abort', endGroup, { once: true });

    child.on('error', (err) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', endGroup);
      reject(new Error(`the shell could not be started: ${err.message}`));
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      options.signal.removeEventListener('abort', endGroup);
      if (options.signal.aborted) return reject(options.signal.reason);
      // A tail chunk may start before the cut: keep only its last part.
      const tailBytes = Buffer.concat(tail);
      const kept = tailBytes.subarray(Math.max(0, tailBytes.length - half));
      dropped += tailBytes.length - kept.length;
      tail = [];
      const head = Buffer.concat(chunks).toString('utf8');
      const output = dropped > 0 ? `${head}\n[… ${dropped} bytes of output cut …]\n${kept.toString('utf8')}` : head + kept.toString('utf8');
      resolve({ exitCode, signal, output, timedOut });
    });
  });
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** The command's environment: the worker's, without the model API's key (a command has no use for it). */
export function commandEnv(env: NodeJS.ProcessEnv, secrets: readonly string[]): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const name of secrets) delete copy[name];
  return copy;
}
