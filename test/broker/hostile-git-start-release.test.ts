/**
 * A start given up after its worktree was made (the worker not yet said hello when the broker
 * stops) releases that worktree; a fifo the starting worker put among git's worktree records
 * blocks every git of that release (worktree unlock, prune, branch -D open each record's gitdir).
 * The broker's stop must not wait out gitTimeoutMs behind it. Real git, a real worker process.
 */
import assert from 'node:assert/strict';
import { existsSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Broker, RootTransport } from '../../main/broker/index.js';
import { GitWorktreeFactory, LocalRunner } from '../../main/broker/runners/index.js';
import { tempDir } from '../agents/helpers.js';
import { defuseFifo, repoIn } from './hostile-git-broker.js';
import { until, within } from './helpers.js';

const temporary: string[] = [];
after(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

test("a starting worker that plants a fifo among git's worktree records and never says hello: the broker's stop ends the release of its worktree a grace later, not after gitTimeoutMs", { timeout: 180_000 }, async () => {
  const home = tempDir('chatty-hostile-start-release-');
  temporary.push(home);
  const { repo, common } = repoIn(home);
  const fifo = join(common, 'worktrees', 'a-fifo', 'gitdir');
  const lines: string[] = [];
  const broker = new Broker({ cancelGraceMs: 2_000, log: (line) => lines.push(line), root: { workspaceRoot: realpathSync(repo), baseBranch: 'main' } });
  const plant = `mkdir -p ${join(common, 'worktrees', 'a-fifo')} && mkfifo ${fifo} && exec sleep 600`;
  broker.addVirtualAgent('planter', new LocalRunner({ command: '/bin/sh', args: ['-c', plant], workspaceFactory: new GitWorktreeFactory({ gitTimeoutMs: 600_000 }), reapGraceMs: 2_000 }));
  const root = new RootTransport(broker);
  try {
    const call = root.invoke('planter', 'anything');
    call.catch(() => {});
    await until(() => existsSync(fifo), 'the fifo planted');
    // Before: the start's release (its worktree made, its worker not up) had no signal, and stop()
    // waited for its git, which waited out gitTimeoutMs (10 minutes here).
    await within(broker.stop(), 60_000, "the broker's stop");
    const result = await call;
    assert.equal(result.success, false);
    assert.match(result.error ?? '', /could not start its worker|cancelled before/);
  } finally {
    defuseFifo(fifo);
    await broker.stop();
  }
});
