import type { AdmittedNode, OpenConnectionOptions, OpenedConnection } from '../../fabric/admission/index.js';
import type { SpawnContext } from '../../fabric/wire/payloads.js';

/** What the broker hands a runner to start one task's worker. */
export interface RunnerStart {
  /** The agent's name: the worker is admitted as `<spec>-<n>`. */
  spec: string;
  /** The spawn context the task carries, already derived or checked by the broker. */
  spawnContext: SpawnContext;
  /** How to serve the connection: directory, registry, call handler, limits. The runner picks `cwd` and `env`. */
  connection: Omit<OpenConnectionOptions, 'cwd' | 'env' | 'node'>;
  /** Called once the node is admitted (its name is known), before its workspace is made or its child spawned. */
  onAdmitted?: (node: AdmittedNode) => void;
  /**
   * Aborting it gives up the start: the child, if spawned, is ended (SIGTERM, then SIGKILL), the
   * workspace released, and `start` rejects with the signal's reason. Without it a start can only
   * be ended once it has resolved (after the hello, or the hello timeout).
   */
  signal?: AbortSignal;
  /**
   * Aborts when the runner's owner stops for good (the broker's `stop()`). A workspace released
   * because the start failed or was given up then has the runner's grace from that moment (or from
   * the release's start, when later), past which what it runs is ended and it fails, as
   * `StartedWorker.stop`'s release does; until then it has git's whole time limit.
   */
  stopping?: AbortSignal;
}

/** A worker a runner started: its connection, plus how to end it. */
export interface StartedWorker extends OpenedConnection {
  /** The context its task carries: the workspace factory may have moved it (a worktree, its branch). */
  spawnContext: SpawnContext;
  /**
   * Ends the child if it still runs (SIGTERM, then SIGKILL after `graceMs`), waits until it has
   * exited, then releases its workspace. Idempotent; resolves only once nothing is left.
   * `stopping` aborts when its owner stops for good (the broker's `stop()`): from then, or from the
   * release's start when that is later, the release has `graceMs`; past it what it runs is ended
   * and it fails, leaving the workspace (a killed gateway's, for the next start's prune).
   */
  stop(graceMs: number, stopping?: AbortSignal): Promise<void>;
}

/** Starts one worker per task for a virtual agent; never reuses one. */
export interface Runner {
  start(request: RunnerStart): Promise<StartedWorker>;
}

/** Where one worker runs. */
export interface Workspace {
  dir: string;
  /** The spawn context as seen from inside this workspace (e.g. `workspace_root` the worktree, `base_branch` its branch). */
  spawnContext: SpawnContext;
  /**
   * Removes what `create` made (a worktree; its branch kept when it has commits). Idempotent.
   * When `signal` aborts, what it runs (a git command) is ended and it rejects.
   */
  release(signal?: AbortSignal): Promise<void>;
}

/** Makes a workspace for a node about to be spawned; a factory that fails fails the task, and no child runs. */
export interface WorkspaceFactory {
  /** `signal` aborts when the start is given up (the call cancelled, the broker stopping): a factory may end what it runs then. */
  create(node: AdmittedNode, spawnContext: SpawnContext, signal?: AbortSignal): Promise<Workspace>;
}
