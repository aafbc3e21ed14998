import type { ChildProcess } from 'node:child_process';
import type { ParticipantConnection } from '../../fabric/admission/index.js';
import { signalWorker } from '../../fabric/admission/worker-group.js';

/** Whether the child has exited (or was never running: a spawn that failed has no pid). */
export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null || child.pid === undefined;
}

/** Resolves once the child has exited (at once if it has). */
export function exitOf(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Ends a worker that still runs: SIGTERM, then SIGKILL (each to its process group) if it is still there after `graceMs`.
 * Resolves once it has exited (and been reaped: its pid is gone).
 */
export async function endChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (hasExited(child)) return;
  const exited = exitOf(child);
  signalWorker(child, 'SIGTERM');
  const timer = setTimeout(() => {
    if (!hasExited(child)) signalWorker(child, 'SIGKILL');
  }, graceMs);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * SIGKILLs the child if it has not exited `graceMs` after `when` resolves: for a child that was
 * sent SIGTERM (as `openConnection` does when its connection closes) and ignores it.
 */
export function killIfLingering(child: ChildProcess, when: Promise<unknown>, graceMs: number): void {
  void when.then(() => {
    if (hasExited(child)) return;
    const timer = setTimeout(() => {
      if (!hasExited(child)) signalWorker(child, 'SIGKILL');
    }, graceMs);
    child.once('exit', () => clearTimeout(timer));
  });
}

/**
 * Once the child has exited, its stdout and stderr are let go of (destroyed), even when a process
 * it left in the background still holds their other ends: an open pipe keeps Node's event loop
 * alive, and a stopped gateway must let its process exit. One turn of the event loop after the
 * exit: what the child wrote before it exited was in the pipe when the exit was signalled, and
 * libuv reads every ready pipe in the same poll phase, before `setImmediate` runs. A pipe that
 * closed on its own in between is left as it is. A stream the caller took and paused (in
 * `onSpawn`) loses what it has not read.
 */
export function letGoOfStdioOnExit(child: ChildProcess): void {
  const letGo = () =>
    setImmediate(() => {
      for (const pipe of [child.stdout, child.stderr]) if (pipe && !pipe.destroyed) pipe.destroy();
    });
  if (hasExited(child)) letGo();
  else child.once('exit', letGo);
}

/**
 * Closes the connection of a worker that has exited while a process of its own still holds the
 * other end (it started one that inherited fd 3, in a session of its own): the socket never ends,
 * and its task would wait for ever on a process the broker never started, holding its worker
 * slot. `graceMs` after the exit, time for everything the worker wrote before it to be read; a
 * connection whose reading waits for a caller (its events or outcome wait for room in the caller's
 * queue) is looked at again a grace later, so what an honest worker wrote last (its outcome) is
 * never cut off by a slow caller. A pause for the connection's own answers puts nothing off: the
 * worker has exited, so nobody honest will read them, and waiting for that waited for ever.
 */
export function closeWhenOrphaned(child: ChildProcess, connection: ParticipantConnection, graceMs: number): void {
  void exitOf(child).then(() => {
    const look = (): void => {
      if (!connection.isOpen) return;
      if (connection.waitingForCaller) {
        setTimeout(look, graceMs).unref();
        return;
      }
      connection.close(`${connection.node.name}'s process exited; a process it left still held its connection`);
    };
    // Unref'd: a stopped gateway's process does not wait for it (its connection is closed by then).
    setTimeout(look, graceMs).unref();
  });
}
