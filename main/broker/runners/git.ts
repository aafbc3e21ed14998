import { execFile } from 'node:child_process';
import { withoutGitLocalEnv } from './worker-env.js';

/** A git command that failed: its arguments, exit code and what it wrote to stderr. */
export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly code: number | string | null,
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} failed${code === null ? '' : ` (${code})`}${stderr ? `: ${stderr}` : ''}`);
  }
}

/**
 * Runs `git <args>` in `cwd` (an argument array, never a shell) and resolves to its stdout. The
 * broker's repository-local variables (`GIT_DIR`…) are not passed: `cwd` alone says which
 * repository. Prompts are off (nothing here may wait for a terminal).
 */
export function git(args: readonly string[], cwd: string, command = 'git'): Promise<string> {
  const env = { ...withoutGitLocalEnv(process.env), GIT_TERMINAL_PROMPT: '0' };
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        const code = typeof err.code === 'number' || typeof err.code === 'string' ? err.code : null;
        reject(new GitError(args, code, String(stderr).trim() || err.message));
      } else resolve(String(stdout));
    });
  });
}
