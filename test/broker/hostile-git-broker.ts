/**
 * For the hostile-worker tests against the broker's own git: a repository, a real broker on it
 * whose agents run the real scripted worker (`chatty-gateway worker`) in worktrees, and the
 * records of "killed gateways" a worker can forge.
 */

/** `<home>/repo`, a git repository on `main`; its common git directory is `<repo>/.git`. */
export function repoIn(home: string): { repo: string; common: string } {
  const repo = join(home, 'repo');
  mkdirSync(repo);
  gitRepoOnMain(repo);
  return { repo, common: join(repo, '.git') };
}

/**
 * Writes what a worker (running as the user) can write in its repository: git's record of a
 * worktree `name` at `path`, on branch `chatty/<name>`, locked with our record of a gateway on
 * this host whose pid does not exist, so the next prune takes it for a killed gateway's.
 */
export function forgeDeadRecord(common: string, name: string, path: string): void {
  const record = join(common, 'worktrees', name);
  mkdirSync(record, { recursive: true });
  writeFileSync(join(record, 'gitdir'), `${join(path, '.git')}\n`);
  writeFileSync(join(record, 'HEAD'), `ref: refs/heads/chatty/${name}\n`);
  writeFileSync(join(record, 'commondir'), '../..\n');
  const base = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: common, encoding: 'utf8' }).trim();
  writeFileSync(join(record, 'locked'), `chatty-gateway ${JSON.stringify({ pid: 2147483646, host: hostname(), base })}`);
}
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { workerCommand } from '../../main/agents/worker-command.js';
import { Broker, RootTransport } from '../../main/broker/index.js';
import { GitWorktreeFactory, LocalRunner, type GitWorktreeFactoryOptions } from '../../main/broker/runners/index.js';
import { gitRepoOnMain } from '../agents/helpers.js';

/** A broker on `repo` (base branch `main`) with `agents` each in a `GitWorktreeFactory` worktree; its root approves every exec. */
export function worktreeBroker(repo: string, agents: readonly string[], log: (line: string) => void = () => {}, factory: GitWorktreeFactoryOptions = {}): { broker: Broker; root: RootTransport } {
  const broker = new Broker({ cancelGraceMs: 2_000, log, root: { workspaceRoot: realpathSync(repo), baseBranch: 'main' } });
  const { command, args } = workerCommand();
  for (const name of agents) {
    broker.addVirtualAgent(name, new LocalRunner({ command, args, workspaceFactory: new GitWorktreeFactory(factory), reapGraceMs: 2_000 }), { description: name });
  }
  const root = new RootTransport(broker);
  root.onApproval(() => 'approved');
  return { broker, root };
}

/**
 * Replaces the fifo with an empty file, letting go of any reader blocked on it first (opened
 * read-write, a fifo has a writer, so a blocked open returns; the close then gives it end of file):
 * git commands of the release read it one after the other, and each must find a file.
 */
export function defuseFifo(fifo: string): void {
  let fd: number;
  try {
    fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
  } catch {
    return; // never made
  }
  writeFileSync(`${fifo}.file`, '');
  renameSync(`${fifo}.file`, fifo);
  closeSync(fd);
}
