import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import type { Directory, AdmittedNode } from './directory.js';
import type { ParticipantConnection, ServeOptions } from './participant-connection.js';
import type { ParticipantRegistry } from './registry.js';
import { serveConnection } from './serve-connection.js';
import { StderrTail } from './stderr-tail.js';
import { signalWorker, WORKER_SPAWN } from './worker-group.js';

export interface OpenConnectionOptions extends ServeOptions {
  directory: Directory;
  registry: ParticipantRegistry;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** A node admitted beforehand (a runner that needs the name first); without one, `spec` is admitted here. */
  node?: AdmittedNode;
  /** Sees the child right after spawn (its stdin/stdout are the caller's); without it stdout is discarded. */
  onSpawn?: (child: ChildProcess) => void;
}

export interface OpenedConnection {
  node: AdmittedNode;
  connection: ParticipantConnection;
  child: ChildProcess;
  /** The last 8 KiB the child wrote to stderr. */
  stderrTail: () => string;
}

/**
 * Admits a node for `spec`, spawns its worker with one end of a socketpair at fd 3 (the fourth
 * `'pipe'` of stdio is a Unix socketpair on Linux and macOS; the child opens it with
 * `new net.Socket({ fd: 3 })`), and serves the broker's end. Resolves once the worker has said
 * hello and is registered; rejects (with the tail of its stderr) if it does not within the hello
 * timeout. When the connection closes the child is reaped (SIGTERM to its process group).
 */
export async function openConnection(
  spec: string,
  command: string,
  args: readonly string[],
  options: OpenConnectionOptions,
): Promise<OpenedConnection> {
  const node = options.node ?? options.directory.admit(spec);
  // A session of its own: no controlling terminal, a process group of its own (worker-group.ts).
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe', 'pipe'], cwd: options.cwd, env: options.env, ...WORKER_SPAWN });
  const stderr = new StderrTail(child.stderr);
  // A child that dies or closes its pipes early must not crash the broker: EPIPE on its stdin
  // (written by whoever took it in onSpawn) and the like are the child's trouble, not ours.
  for (const pipe of [child.stdin, child.stdout, child.stderr]) pipe?.on('error', () => {});
  if (options.onSpawn) options.onSpawn(child);
  else child.stdout?.resume();
  const exited = once(child, 'close').catch(() => {});
  const stream = child.stdio[3] as Socket;
  const connection = serveConnection(stream, options.registry, node, options);
  child.on('error', (err) => connection.close(`could not run ${command}: ${err.message}`));
  // `closed` resolves once the stream is gone, after a refused hello's error has been flushed.
  void connection.closed.then(() => {
    if (child.exitCode === null && child.signalCode === null) signalWorker(child, 'SIGTERM');
  });
  try {
    await connection.hello;
  } catch (err) {
    await exited; // the child is being reaped; its stderr is complete once it has closed
    const tail = stderr.text().trimEnd();
    throw new Error(
      `fabric: worker ${node.name} (${command}) did not complete its hello: ${(err as Error).message}` +
        (tail ? `\n--- the end of its stderr ---\n${tail}` : ''),
    );
  }
  return { node, connection, child, stderrTail: () => stderr.text() };
}
