/**
 * For the hostile-worker tests against the broker's own git: a real broker on a repository whose
 * agents run the real scripted worker (`chatty-gateway worker`) in worktrees, every exec approved.
 */
import { realpathSync } from 'node:fs';
import { workerCommand } from '../../main/agents/worker-command.js';
import { Broker, RootTransport } from '../../main/broker/index.js';
import { GitWorktreeFactory, LocalRunner } from '../../main/broker/runners/index.js';

/** A broker on `repo` (base branch `main`) with `agents` each in a `GitWorktreeFactory` worktree; its root approves every exec. */
export function worktreeBroker(repo: string, agents: readonly string[], log: (line: string) => void = () => {}): { broker: Broker; root: RootTransport } {
  const broker = new Broker({ cancelGraceMs: 2_000, log, root: { workspaceRoot: realpathSync(repo), baseBranch: 'main' } });
  const { command, args } = workerCommand();
  for (const name of agents) {
    broker.addVirtualAgent(name, new LocalRunner({ command, args, workspaceFactory: new GitWorktreeFactory(), reapGraceMs: 2_000 }), { description: name });
  }
  const root = new RootTransport(broker);
  root.onApproval(() => 'approved');
  return { broker, root };
}
