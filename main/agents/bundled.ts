import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { AgentCard } from '../broker/broker.js';
import { GitWorktreeFactory } from '../broker/runners/git-worktree-factory.js';
import { LocalRunner } from '../broker/runners/local-runner.js';
import { isInside } from '../broker/spawn-context.js';
import type { Runner, Workspace, WorkspaceFactory } from '../broker/runners/runner.js';
import type { AdmittedNode } from '../fabric/admission/index.js';
import type { SpawnContext } from '../fabric/wire/payloads.js';
import { workerEnv, withoutGitLocalEnv } from '../broker/runners/worker-env.js';
import { workerCommand, type WorkerCommand } from './worker-command.js';

/** A virtual agent ready to publish: `broker.addVirtualAgent(name, runner, card)`. */
export interface BundledAgent {
  name: string;
  runner: Runner;
  card: AgentCard;
}

/**
 * Where the bundled agents work. `git`: the directory is in a git work tree with a commit, and each
 * worker gets a worktree of its own on a new branch from `baseBranch`. `directory`: each worker
 * runs in the directory itself. Give `workspaceRoot` and `baseBranch` to the broker as the root's
 * (`new Broker({root: {workspaceRoot, baseBranch}})`): a worktree is made from the spawn context.
 */
export type BundledWorkspace =
  | { kind: 'git'; workspaceRoot: string; baseBranch: string }
  | { kind: 'directory'; workspaceRoot: string };

/**
 * How the bundled agents will work from `cwd`: in git worktrees when `cwd` is inside a git work tree
 * whose HEAD names a commit (the base is the current branch, or the commit on a detached HEAD),
 * otherwise in `cwd` itself.
 */
export async function detectWorkspace(cwd: string = process.cwd()): Promise<BundledWorkspace> {
  const workspaceRoot = await realpath(cwd);
  const git = (args: string[]): Promise<string> =>
    promisify(execFile)('git', args, { cwd: workspaceRoot, env: { ...withoutGitLocalEnv(process.env), GIT_TERMINAL_PROMPT: '0' } }).then(({ stdout }) => stdout.trim());
  try {
    if ((await git(['rev-parse', '--is-inside-work-tree'])) !== 'true') return { kind: 'directory', workspaceRoot };
    await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  } catch {
    return { kind: 'directory', workspaceRoot }; // not a repository, no git, or no commit yet
  }
  const branch = await git(['symbolic-ref', '--quiet', '--short', 'HEAD']).catch(() => '');
  const baseBranch = branch !== '' ? branch : await git(['rev-parse', 'HEAD']);
  return { kind: 'git', workspaceRoot, baseBranch };
}

export interface BundledAgentsOptions {
  workspace: BundledWorkspace;
  /** How each worker is started (default `workerCommand()`: this package's `chatty-gateway worker`, the scripted agent). */
  worker?: WorkerCommand;
  /** SIGKILL this long after a SIGTERM a worker ignores (the runner's `reapGraceMs`). */
  reapGraceMs?: number;
  /** Variables every worker gets on top of its environment, e.g. `gatewayWorkerEnv(started)` (where an LLM worker finds the plugin tools). */
  env?: Record<string, string>;
  /** Where a worktree factory's prune line goes (the first worktree in a repository prunes what a killed gateway left). */
  log?: (line: string) => void;
}

/** The names of the bundled agents. */
export const BUNDLED_AGENT_NAMES = ['local-coder', 'local-reviewer'] as const;

/**
 * The bundled virtual agents, `local-coder` and `local-reviewer`: each task starts a fresh
 * `chatty-gateway worker` (the scripted agent), in a git worktree of its own when the workspace is
 * `git`, else in the workspace directory (`SharedDirectory`).
 */
export function bundledAgents(options: BundledAgentsOptions): BundledAgent[] {
  const worker = options.worker ?? workerCommand();
  const describe = (role: string): AgentCard => ({
    description: `The scripted reference agent as a ${role}: runs the instructions in its task text, one per line (say, step, exec, write, ask, invoke, agents, post, sleep, fail); exec and write only after approval, in its ${
      options.workspace.kind === 'git' ? 'own git worktree' : 'workspace directory'
    }.`,
    version: '1.0.0',
    skills: [{ name: 'script', description: 'runs a script of instructions', examples: ['exec echo hi', 'write notes.txt hello', 'invoke local-reviewer say looks good'] }],
  });
  return BUNDLED_AGENT_NAMES.map((name) => ({
    name,
    card: describe(name === 'local-coder' ? 'coder' : 'reviewer'),
    runner: new LocalRunner({
      command: worker.command,
      args: worker.args,
      workspaceFactory: workspaceFactoryFor(options.workspace, options.log),
      // An extra variable (Electron's, the gateway's location) means passing a whole environment; PWD is then the broker's.
      ...(worker.env || options.env ? { env: { ...workerEnv(process.env), ...worker.env, ...options.env } } : {}),
      ...(options.reapGraceMs !== undefined ? { reapGraceMs: options.reapGraceMs } : {}),
    }),
  }));
}

/**
 * At a gateway's start: removes the worktrees (and their empty branches) that a gateway which is
 * gone (killed) left in the workspace's repository, and says how many in one line to `log`.
 * Nothing to do for a `directory` workspace. A failure is said, not thrown: the gateway starts.
 */
export async function pruneWorktreesAtStart(workspace: BundledWorkspace, log: (line: string) => void): Promise<void> {
  if (workspace.kind !== 'git') return;
  await new GitWorktreeFactory({ log }).prune(workspace.workspaceRoot).catch((err: unknown) => log(`worktrees: could not prune in ${workspace.workspaceRoot}: ${(err as Error).message}`));
}

/** How each worker of `workspace` gets its directory: a `GitWorktreeFactory` worktree for `git`, else a `SharedDirectory`. */
export function workspaceFactoryFor(workspace: BundledWorkspace, log?: (line: string) => void): WorkspaceFactory {
  return workspace.kind === 'git' ? new GitWorktreeFactory(log ? { log } : {}) : new SharedDirectory(workspace.workspaceRoot);
}

/**
 * Without git: every worker works in the directory its spawn context names (`workspace_root`, which
 * the broker has checked lies inside the root's), else in `fallback`; nothing is made or removed.
 * The directory is resolved again here and must still lie inside `fallback` by real path (a link
 * put in its way after the broker's check is refused, never followed out).
 */
export class SharedDirectory implements WorkspaceFactory {
  /**
   * `fallback` as a real path, resolved once (here, or at the first task when it is not there yet):
   * a path through a link lying in an agents' workspace, followed again at each task, was one
   * approved `ln -sfn` from working in any folder (the app's pages), while the desktop bridge had
   * checked where it led at its attach (docs/embedding.md).
   */
  private top: Promise<string> | undefined;

  constructor(private readonly fallback: string) {
    try {
      this.top = Promise.resolve(realpathSync(fallback));
    } catch {
      // not there yet: resolved at the first task
    }
  }

  async create(_node: AdmittedNode, spawnContext: SpawnContext): Promise<Workspace> {
    const top = await (this.top ??= realpath(this.fallback)).catch((err: unknown) => {
      this.top = undefined; // not there yet: asked again at the next task
      throw err;
    });
    const dir = await realpath(spawnContext.workspace_root ?? top);
    if (!isInside(dir, top)) {
      throw new Error(`workspace_root ${JSON.stringify(spawnContext.workspace_root)} leads to ${JSON.stringify(dir)}, outside the workspace ${JSON.stringify(top)}`);
    }
    return { dir, spawnContext: { ...spawnContext, workspace_root: dir }, release: async () => {} };
  }
}
