import type { ChildProcess } from 'node:child_process';

/**
 * A worker is spawned in a session of its own (`detached: true`: setsid), so it has no
 * controlling terminal — no `/dev/tty` to push keys into the person's prompt (TIOCSTI) or repaint
 * it — and it leads a process group of its own, out of reach of the terminal's Ctrl-C and hangup.
 * Its ends come from the gateway instead, sent to that whole group: a worker run through a shell
 * (`serve --agent NAME=COMMAND` runs `/bin/sh -c COMMAND`, and dash does not exec the last
 * command) gets the signal itself, not only the shell. Falls back to the child alone when the
 * group cannot be signalled; a child never started (no pid) is left alone.
 */
export const WORKER_SPAWN = { detached: true } as const;

/** Sends `signal` to the worker's process group (see `WORKER_SPAWN`). */
export function signalWorker(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}
