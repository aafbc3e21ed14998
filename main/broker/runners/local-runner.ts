import type { ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { once } from 'node:events';
import { openConnection, type AdmittedNode, type OpenedConnection, type ParticipantConnection } from '../../fabric/admission/index.js';
import { CLOSE_GRACE_MS } from '../../fabric/limits/constants.js';
import type { SpawnContext } from '../../fabric/wire/payloads.js';
import { closeWhenOrphaned, endChild, killIfLingering, letGoOfStdioOnExit } from './end-child.js';
import { graceAfter } from './grace-after.js';
import type { Runner, RunnerStart, StartedWorker, Workspace, WorkspaceFactory } from './runner.js';
import { workerEnv } from './worker-env.js';

export interface LocalRunnerOptions {
  /**
   * The worker's executable, e.g. `process.execPath`: the composition's choice, never the
   * runner's (this package's own worker program is `defaultWorker()` from the package root, whose
   * `LocalRunner` also starts it when no command is given).
   */
  command: string;
  /** The worker's arguments. */
  args?: readonly string[];
  /**
   * The worker's whole environment, passed as given. Without it the worker gets the broker's
   * environment minus git's repository-local variables and Node's IPC plumbing, with `PWD` its
   * workspace (`workerEnv`).
   */
  env?: NodeJS.ProcessEnv;
  /** Variables set on top of the worker's environment, the given one or the default (inside Electron, `ELECTRON_RUN_AS_NODE`). */
  extraEnv?: Record<string, string>;
  /** Where each worker runs; without one, in the broker's own directory with the task's spawn context unchanged. */
  workspaceFactory?: WorkspaceFactory;
  /**
   * When a worker's connection closes on its own (no hello in time, a broken frame, the worker
   * hung up) `openConnection` sends it SIGTERM; one still there this long after is sent SIGKILL
   * (default 5 s).
   */
  reapGraceMs?: number;
}

/** Spawns each task's worker as a local child process on the fd-3 socketpair, in a workspace of its own. */
export class LocalRunner implements Runner {
  private readonly command: string;
  private readonly args: readonly string[];
  private readonly extraEnv: Record<string, string>;
  private readonly reapGraceMs: number;

  constructor(private readonly options: LocalRunnerOptions) {
    if (typeof options?.command !== 'string' || options.command === '') {
      throw new Error("LocalRunner needs the worker's command (e.g. `new LocalRunner(defaultWorker())` with `defaultWorker` from the package root)");
    }
    this.command = options.command;
    this.args = options.args ?? [];
    this.extraEnv = options.extraEnv ?? {};
    this.reapGraceMs = options.reapGraceMs ?? CLOSE_GRACE_MS;
  }

  async start(request: RunnerStart): Promise<StartedWorker> {
    const { spec, connection, signal } = request;
    signal?.throwIfAborted();
    const node = connection.directory.admit(spec);
    request.onAdmitted?.(node);

    let workspace: Workspace | undefined;
    if (this.options.workspaceFactory) {
      try {
        workspace = await this.options.workspaceFactory.create(node, request.spawnContext, signal);
      } catch (err) {
        throw new Error(`runner: no workspace for ${node.name}, so its worker was not started: ${messageOf(err)}`, { cause: err });
      }
    }
    const made = workspace;
    const release = onceOnly(made ? (signal) => made.release(signal) : async () => {});
    // Released because the start failed or was given up: with no grace while the owner runs (a
    // cancelled call is not the broker's stop, and a release cut short leaves the worktree), a
    // grace once it stops: a fifo the starting worker put among git's records held stop() for
    // git's whole time limit.
    const releaseGivenUp = async (): Promise<void> => {
      const limit = graceAfter(request.stopping, this.reapGraceMs);
      try {
        await release(limit.signal);
      } finally {
        limit.dispose();
      }
    };
    if (signal?.aborted) {
      await releaseGivenUp().catch(() => {});
      signal.throwIfAborted();
    }

    const cwd = workspace?.dir;
    // E.g. the default worker inside Electron needs ELECTRON_RUN_AS_NODE whichever environment it is given.
    const env = { ...(this.options.env ?? workerEnv(process.env, cwd)), ...this.extraEnv };
    let child: ChildProcess | undefined;
    const onAbort = () => {
      if (child) void endChild(child, this.reapGraceMs); // openConnection then fails, once the child is gone
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    let opened: OpenedConnection;
    try {
      opened = await openConnection(spec, this.command, this.args, {
        ...connection,
        node,
        cwd,
        env,
        onSpawn: (spawned) => {
          child = spawned;
          letGoOfStdioOnExit(spawned); // a background process of the worker's must not keep the gateway alive
          const socket = spawned.stdio[3] as Socket | null;
          if (socket) killIfLingering(spawned, once(socket, 'close').catch(() => {}), this.reapGraceMs);
          if (connection.onSpawn) connection.onSpawn(spawned);
          else spawned.stdout?.resume();
          if (signal?.aborted) onAbort();
        },
      });
    } catch (err) {
      const released = await releaseGivenUp().then(
        () => '',
        (releaseErr: unknown) => `\n(and its workspace could not be released: ${messageOf(releaseErr)})`,
      );
      if (signal?.aborted) throw withNote(signal.reason, released);
      throw withNote(err, released);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    const worker = new LocalWorker(opened, workspace?.spawnContext ?? request.spawnContext, release);
    // A worker gone with its connection still held by a process of its own must not hold its task (and slot) for ever.
    closeWhenOrphaned(opened.child, opened.connection, this.reapGraceMs);
    if (signal?.aborted) {
      await worker.stop(this.reapGraceMs, request.stopping).catch(() => {});
      signal.throwIfAborted();
    }
    return worker;
  }
}

/** One started worker: its connection and child, and how to end them and release its workspace. */
class LocalWorker implements StartedWorker {
  readonly node: AdmittedNode;
  readonly connection: ParticipantConnection;
  readonly child: ChildProcess;
  readonly stderrTail: () => string;
  private stopping: Promise<void> | undefined;

  constructor(
    opened: OpenedConnection,
    readonly spawnContext: SpawnContext,
    private readonly release: (signal?: AbortSignal) => Promise<void>,
  ) {
    this.node = opened.node;
    this.connection = opened.connection;
    this.child = opened.child;
    this.stderrTail = opened.stderrTail;
  }

  /** Idempotent: every call gets the same promise, except after a failure (a release that failed), which the next call tries again. */
  stop(graceMs: number, stopping?: AbortSignal): Promise<void> {
    if (!this.stopping) {
      const attempt = (async () => {
        this.connection.close('stopped by its runner');
        await endChild(this.child, graceMs);
        // A release's git that a worker made block (a fifo among git's records) waits out the git
        // time limit; once the owner stops, it is given a grace, then ended.
        const limit = graceAfter(stopping, graceMs);
        try {
          await this.release(limit.signal);
        } finally {
          limit.dispose();
        }
      })();
      this.stopping = attempt;
      attempt.catch(() => {
        if (this.stopping === attempt) this.stopping = undefined;
      });
    }
    return this.stopping;
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function withNote(err: unknown, note: string): unknown {
  if (note === '') return err;
  if (err instanceof Error) {
    err.message += note;
    return err;
  }
  return new Error(`${String(err)}${note}`);
}

/**
 * `run` once; later calls share its promise (and retry it after a failure). Every caller's signal
 * reaches the attempt that is running: a release begun without one (a worker's end) is still
 * ended when a later caller's grace (the broker's stop) runs out.
 */
function onceOnly(run: (signal?: AbortSignal) => Promise<void>): (signal?: AbortSignal) => Promise<void> {
  let done: Promise<void> | undefined;
  let given: AbortController | undefined; // the running attempt's signal, aborted by any caller's
  return (signal) => {
    if (!done) {
      const controller = new AbortController();
      const attempt = run(controller.signal);
      done = attempt;
      given = controller;
      attempt.then(
        () => {
          if (given === controller) given = undefined;
        },
        () => {
          if (done === attempt) done = undefined;
          if (given === controller) given = undefined;
        },
      );
    }
    if (signal && given) passOn(signal, given, done);
    return done;
  };
}

/** Aborts `to` when `from` aborts, until `running` settles. */
function passOn(from: AbortSignal, to: AbortController, running: Promise<void>): void {
  if (from.aborted) {
    to.abort(from.reason);
    return;
  }
  const onAbort = () => to.abort(from.reason);
  from.addEventListener('abort', onAbort, { once: true });
  const forget = () => from.removeEventListener('abort', onAbort);
  running.then(forget, forget);
}
