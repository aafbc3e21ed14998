import { fileURLToPath } from 'node:url';
import { workerEnv } from '../broker/runners/worker-env.js';

/** How to start `chatty-gateway worker`: an executable and its arguments. */
export interface WorkerCommand {
  command: string;
  args: string[];
  /** Variables the worker needs on top of its default environment (Electron's Node mode). */
  env?: Record<string, string>;
}

const FROM_SOURCE = import.meta.url.endsWith('.ts');

/**
 * `chatty-gateway worker --participant-fd 3 [--agent <kind>]` from this very package: from the
 * built `out/` tree `node out/main/cli/bin.js worker …`; from the TypeScript sources (tests)
 * `node --import <tsx by its full address> main/cli/bin.ts worker …` (a bare `tsx` would be looked
 * up from the worker's directory, and a worktree has no node_modules). The executable is this
 * process's own (`process.execPath`); inside Electron it runs as plain Node
 * (`ELECTRON_RUN_AS_NODE=1`).
 */
export function workerCommand(kind?: string): WorkerCommand {
  const bin = fileURLToPath(new URL(FROM_SOURCE ? '../cli/bin.ts' : '../cli/bin.js', import.meta.url));
  const args = [...(FROM_SOURCE ? ['--import', import.meta.resolve('tsx')] : []), bin, 'worker', '--participant-fd', '3', ...(kind !== undefined ? ['--agent', kind] : [])];
  return { command: process.execPath, args, ...(process.versions['electron'] !== undefined ? { env: { ELECTRON_RUN_AS_NODE: '1' } } : {}) };
}

/**
 * The `LocalRunner` options that start this package's own worker program, `chatty-gateway worker
 * --agent <kind>` (`scripted`, the default, or `llm`): `new LocalRunner(defaultWorker())`, or with a
 * workspace factory `new LocalRunner({ ...defaultWorker('llm'), workspaceFactory })`. `env` is set
 * only when the worker needs a variable on top of the runner's default environment (inside
 * Electron); it is then the whole environment, `workerEnv(process.env)` plus that variable.
 */
export function defaultWorker(kind?: string): { command: string; args: string[]; env?: NodeJS.ProcessEnv } {
  const worker = workerCommand(kind);
  return { command: worker.command, args: worker.args, ...(worker.env ? { env: { ...workerEnv(process.env), ...worker.env } } : {}) };
}
