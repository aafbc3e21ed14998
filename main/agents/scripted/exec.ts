import { spawn, type ChildProcess } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';

/**
 * How an approved `exec` runs: `/bin/sh -c <command>` (the human approved a shell command line, so
 * a shell runs it, pipes and all), in the workspace, stdin closed, its own process group (so the
 * whole group ends with it). Its output (stderr sent to stdout, `2>&1`, so the two interleave as on
 * a terminal) is handed on
 * as it arrives, up to `maxOutputBytes`; past that it is read and dropped, and the report says how
 * much was cut. What it leaves running in the background is killed when it exits. It is ended (SIGTERM to the group, SIGKILL 2 s later) when `timeoutMs` passes or
 * `signal` aborts.
 */
export interface ExecOptions {
  cwd: string;
  /** Called with each piece of output, in order, as it comes. */
  onOutput: (text: string) => void;
  signal?: AbortSignal;
  /** Default `EXEC_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** Default `EXEC_MAX_OUTPUT_BYTES`. */
  maxOutputBytes?: number;
  env?: NodeJS.ProcessEnv;
}

export interface ExecResult {
  /** The exit code, or null when a signal ended it. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Bytes of output that were read and dropped (past the cap). */
  droppedBytes: number;
  /** Why it was ended early: `timeout` or `cancelled`; undefined when it ended by itself. */
  ended?: 'timeout' | 'cancelled';
}

/** Ten minutes: long enough for a test suite, short enough that a hung command does not hold a task forever. */
export const EXEC_TIMEOUT_MS = 10 * 60_000;
/** 64 KiB of output is reported; the rest is counted. */
export const EXEC_MAX_OUTPUT_BYTES = 64 * 1024;
const KILL_AFTER_MS = 2_000;

const running = new Set<ChildProcess>();

/** Ends every command still running (their process groups): for a worker told to stop. */
export function killRunningCommands(): void {
  for (const child of running) killGroup(child, 'SIGKILL');
}

export function runCommand(command: string, options: ExecOptions): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    // One pipe for both streams (`exec 2>&1` first), so the output reads as it would on a terminal.
    const child = spawn('/bin/sh', ['-c', `exec 2>&1\n${command}`], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group: a timeout or a cancel ends what it started too
    });
    running.add(child);
    const cap = options.maxOutputBytes ?? EXEC_MAX_OUTPUT_BYTES;
    let kept = 0;
    let droppedBytes = 0;
    let ended: ExecResult['ended'];
    const decoders = { out: new StringDecoder('utf8'), err: new StringDecoder('utf8') };
    const take = (decoder: StringDecoder) => (chunk: Buffer) => {
      const room = cap - kept;
      const part = room >= chunk.length ? chunk : chunk.subarray(0, Math.max(room, 0));
      droppedBytes += chunk.length - part.length;
      kept += part.length;
      if (part.length > 0) {
        const text = decoder.write(part);
        if (text !== '') options.onOutput(text);
      }
    };
    child.stdout!.on('data', take(decoders.out));
    child.stderr!.on('data', take(decoders.err));

    let killTimer: NodeJS.Timeout | undefined;
    const stop = (why: 'timeout' | 'cancelled'): void => {
      if (ended || child.exitCode !== null || child.signalCode !== null) return;
      ended = why;
      killGroup(child, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(child, 'SIGKILL'), KILL_AFTER_MS);
    };
    const timer = setTimeout(() => stop('timeout'), options.timeoutMs ?? EXEC_TIMEOUT_MS);
    const onAbort = (): void => stop('cancelled');
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });

    child.once('error', (err) => {
      running.delete(child);
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      reject(err);
    });
    // What the command left running in the background still holds its output open: it ends with it.
    child.once('exit', () => killGroup(child, 'SIGKILL'));
    child.once('close', (code, signal) => {
      running.delete(child);
      clearTimeout(timer);
      clearTimeout(killTimer);
      options.signal?.removeEventListener('abort', onAbort);
      for (const decoder of [decoders.out, decoders.err]) {
        const tail = decoder.end();
        if (tail !== '') options.onOutput(tail);
      }
      resolve({ code, signal, droppedBytes, ...(ended ? { ended } : {}) });
    });
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is already gone
  }
}
