/** Runners start one worker per task for a virtual agent; workspace factories say where it runs. */
export type { Runner, RunnerStart, StartedWorker, Workspace, WorkspaceFactory } from './runner.js';
export { LocalRunner, type LocalRunnerOptions } from './local-runner.js';
export { GitWorktreeFactory, worktreeName, type GitWorktreeFactoryOptions } from './git-worktree-factory.js';
export type { PruneReport } from './worktree-prune.js';
export { GitError } from './git.js';
export { letGoOfStdioOnExit } from './end-child.js';
export { GATEWAY_CREDENTIAL_ENV, GIT_LOCAL_ENV, NODE_PLUMBING_ENV, workerEnv } from './worker-env.js';
