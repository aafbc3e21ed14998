/**
 * The environment a runner gives a worker by default: the broker's own, minus what would point
 * the worker somewhere else than its workspace, or is plumbing meant for the broker process only.
 * Credentials (API keys) pass: a worker is an agent the user configured, and it needs them; the
 * gateway's own do not (`GATEWAY_CREDENTIAL_ENV`).
 */

/**
 * Git's repository-local variables (`git rev-parse --local-env-vars`, the list git itself clears
 * before it runs a command in another repository). A `GIT_DIR` or `GIT_WORK_TREE` inherited from
 * the broker (started from a git hook, say) would send every git command the worker runs in its
 * worktree to the broker's repository instead.
 */
export const GIT_LOCAL_ENV: readonly string[] = [
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_CONFIG',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
  'GIT_OBJECT_DIRECTORY',
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_IMPLICIT_WORK_TREE',
  'GIT_GRAFT_FILE',
  'GIT_INDEX_FILE',
  'GIT_NO_REPLACE_OBJECTS',
  'GIT_REPLACE_REF_BASE',
  'GIT_PREFIX',
  'GIT_INTERNAL_SUPER_PREFIX',
  'GIT_SHALLOW_FILE',
  'GIT_COMMON_DIR',
];

/**
 * Node's parent/child plumbing: a broker that was itself forked (or is a cluster worker) must not
 * hand its worker `NODE_CHANNEL_FD`, which would make a Node worker treat a descriptor (fd 3 is
 * the participant socket) as an IPC channel.
 */
export const NODE_PLUMBING_ENV: readonly string[] = ['NODE_CHANNEL_FD', 'NODE_CHANNEL_SERIALIZATION_MODE', 'NODE_UNIQUE_ID'];

/**
 * The gateway's own credentials, read from its environment: the remote A2A runner's bearer token
 * (`serve --remote-runner`). No worker needs it, and what reaches a worker reaches the commands it
 * runs, whose output an LLM agent hands its model.
 */
export const GATEWAY_CREDENTIAL_ENV: readonly string[] = ['CHATTY_REMOTE_RUNNER_TOKEN'];

/** `parent` without git's repository-local variables (also `GIT_CONFIG_KEY_<n>` / `GIT_CONFIG_VALUE_<n>`). */
export function withoutGitLocalEnv(parent: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...parent };
  for (const name of GIT_LOCAL_ENV) delete env[name];
  for (const name of Object.keys(env)) if (/^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(name)) delete env[name];
  return env;
}

/**
 * The default worker environment: `parent` minus `GIT_LOCAL_ENV`, `NODE_PLUMBING_ENV` and
 * `GATEWAY_CREDENTIAL_ENV`, and with `PWD` saying `cwd` when the worker runs somewhere else than
 * the broker.
 */
export function workerEnv(parent: NodeJS.ProcessEnv, cwd?: string): NodeJS.ProcessEnv {
  const env = withoutGitLocalEnv(parent);
  for (const name of [...NODE_PLUMBING_ENV, ...GATEWAY_CREDENTIAL_ENV]) delete env[name];
  if (cwd !== undefined) env.PWD = cwd;
  return env;
}

/**
 * The environment of a git command the broker runs itself: what a worker gets, with no `PWD`
 * (git is told its folder by `cwd`) and prompts off. What that git runs (a `post-checkout` hook, a
 * filter) is what a worker may have planted in its repository, so it gets no more than a worker.
 */
export function brokerGitEnv(parent: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = workerEnv(parent);
  delete env.PWD;
  env.GIT_TERMINAL_PROMPT = '0';
  return env;
}
