/**
 * A hostile worker against the broker's own git (GitWorktreeFactory): the worker runs as the
 * user, so it can write its repository's hooks and config (shared by every worktree), and the
 * broker then runs git there to make its callees' worktrees and to release its own. What that git
 * runs (a hook, a filter) must neither hold the gateway (its release, its stop) nor reach the
 * person's terminal. Real workers (`chatty-gateway worker`, the scripted agent) whose approved
 * command plants the hook, as a hostile package's `npm test` would; real git repositories.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { workerCommand } from '../../main/agents/worker-command.js';
import { Broker, RootTransport } from '../../main/broker/index.js';
import { GitWorktreeFactory, LocalRunner, type GitWorktreeFactoryOptions } from '../../main/broker/runners/index.js';
import { gitRepoOnMain, tempDir } from '../agents/helpers.js';
import { until, within } from './helpers.js';

const temporary: string[] = [];
/** Files the planted hooks write their pids to: whatever still runs is ended after the tests. */
const pidFiles: string[] = [];
after(() => {
  for (const file of pidFiles) {
    if (!existsSync(file)) continue;
    for (const pid of readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  }
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

/** A repository on `main`, a broker whose two agents (coder, reviewer) run the scripted worker in worktrees, every exec approved. */
function setUp(factory: GitWorktreeFactoryOptions = {}) {
  const home = tempDir('chatty-hostile-git-');
  temporary.push(home);
  const repo = join(home, 'repo');
  execFileSync('mkdir', [repo]);
  gitRepoOnMain(repo);
  const broker = new Broker({ cancelGraceMs: 2_000, log: () => {}, root: { workspaceRoot: realpathSync(repo), baseBranch: 'main' } });
  const { command, args } = workerCommand();
  for (const name of ['coder', 'reviewer']) {
    broker.addVirtualAgent(name, new LocalRunner({ command, args, workspaceFactory: new GitWorktreeFactory(factory), reapGraceMs: 2_000 }), { description: name });
  }
  const root = new RootTransport(broker);
  root.onApproval(() => 'approved');
  const pids = join(home, 'hook-pids');
  pidFiles.push(pids);
  /** A hook script the worker will copy into place (what a hostile package carries), and the command that plants it as `hook`. */
  const payload = (hook: string, body: string): string => {
    const file = join(home, `${hook}.payload`);
    writeFileSync(file, `#!/bin/sh\necho $$ >> ${pids}\n${body}\n`, { mode: 0o755 });
    return `exec cp ${file} "$(git rev-parse --git-common-dir)/hooks/${hook}"`;
  };
  const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, encoding: 'utf8' }).trim();
  /** Only the repository's own checkout and branch are left: every worktree and empty branch the broker made is gone. */
  const nothingLeft = () => {
    assert.deepEqual(git('branch', '--format=%(refname:short)'), 'main');
    assert.equal(git('worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length, 1);
  };
  return { home, repo, broker, root, payload, git, pids, nothingLeft };
}

/** This process's session id (the sixth field of /proc/self/stat, read after the command's name). */
function sessionOf(stat: string): string {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]!;
}

test('a hook the worker plants cannot hold its release: the task ends and stop() resolves', async () => {
  const { broker, root, payload, git } = setUp();
  try {
    // reference-transaction runs on every ref update: the branch -D of the worker's own release.
    const result = await within(root.invoke('coder', `${payload('reference-transaction', 'exec sleep 120')}\nsay planted`), 20_000, "the coder's task (its worktree's release)");
    assert.equal(result.success, true, result.error);
    assert.equal(result.response, '[exit code 0]\nplanted\n');
    assert.deepEqual(git('branch', '--format=%(refname:short)'), 'main', 'the release deleted the empty branch');
  } finally {
    await within(broker.stop(), 20_000, 'the broker\'s stop');
  }
});

test("a hook the broker's git runs is in a session of its own: no controlling terminal of the gateway's to type into", async () => {
  const { home, broker, root, payload } = setUp();
  const sid = join(home, 'hook-sid');
  try {
    // post-checkout runs on the `git worktree add` that makes the callee's worktree.
    const plant = payload('post-checkout', `sed 's/.*) //' /proc/$$/stat | cut -d' ' -f4 > ${sid}`);
    const result = await within(root.invoke('coder', `${plant}\ninvoke reviewer say reviewed`), 20_000, "the coder's task");
    assert.equal(result.success, true, result.error);
    assert.match(result.response, /reviewed/);
    const hookSession = readFileSync(sid, 'utf8').trim();
    assert.notEqual(hookSession, sessionOf(readFileSync('/proc/self/stat', 'utf8')), "the hook ran in the gateway's session");
  } finally {
    await within(broker.stop(), 20_000, 'the broker\'s stop');
  }
});

test("a hook that never ends on a callee's worktree add is ended after gitTimeoutMs: the call fails, nothing is left, the repository is not held", async () => {
  const { broker, root, payload, nothingLeft } = setUp({ gitTimeoutMs: 1_500 });
  try {
    const result = await within(root.invoke('coder', `${payload('post-checkout', 'exec sleep 120')}\ninvoke reviewer say reviewed`), 20_000, "the coder's task");
    assert.equal(result.success, false);
    assert.match(result.error ?? '', /invoke reviewer: .*git worktree add .*did not end within 1500 ms/);
    // The coder's own release ran after (the repository was not held), and nothing of the reviewer's is left.
    nothingLeft();
  } finally {
    await within(broker.stop(), 20_000, 'the broker\'s stop');
  }
});

test("the broker's stop while a hook holds a callee's worktree add ends the add at once: nothing of the callee is left", async () => {
  const { broker, root, payload, pids, nothingLeft } = setUp(); // the default time limit, 5 minutes
  let stopped = false;
  try {
    const call = root.invoke('coder', `${payload('post-checkout', 'exec sleep 120')}\ninvoke reviewer say reviewed`);
    await until(() => existsSync(pids), 'the hook to run');
    // Hang guards, not speed checks: an add the stop did not end lasts the hook's 120 s (or the
    // 5-minute limit); 60 s tells it apart and leaves a loaded machine time.
    await within(broker.stop(), 60_000, "the broker's stop");
    stopped = true;
    const result = await within(call, 60_000, "the coder's call");
    assert.equal(result.success, false);
    nothingLeft();
  } finally {
    if (!stopped) await within(broker.stop(), 20_000, "the broker's stop").catch(() => {});
  }
});

test("a hook that leaves a process in the background holding git's output does not hold the callee's worktree add", async () => {
  const { broker, root, payload } = setUp();
  try {
    const result = await within(root.invoke('coder', `${payload('post-checkout', 'sleep 120 &')}\ninvoke reviewer say reviewed`), 20_000, "the coder's task");
    assert.equal(result.success, true, result.error);
    assert.match(result.response, /reviewed/);
  } finally {
    await within(broker.stop(), 20_000, "the broker's stop");
  }
});

test('a worker that puts a link in place of its worktree: the release removes the link, never what it leads to, and leaves no worktree or branch', async () => {
  const { home, broker, root, nothingLeft } = setUp();
  // A folder of the person's, which the worker dresses up as its worktree (a .git file naming the worktree's git directory).
  const victim = join(home, 'victim');
  execFileSync('mkdir', [victim]);
  writeFileSync(join(victim, 'precious.txt'), 'the person\'s work\n');
  try {
    const swap = `exec d=$PWD; g=$(git rev-parse --git-dir); cd /; echo "gitdir: $g" > ${victim}/.git; rm -rf "$d"; ln -s ${victim} "$d"`;
    const result = await within(root.invoke('coder', `${swap}\nsay swapped`), 20_000, "the coder's task");
    assert.equal(result.success, true, result.error);
    await within(broker.stop(), 20_000, "the broker's stop");
    assert.equal(readFileSync(join(victim, 'precious.txt'), 'utf8'), "the person's work\n", 'the release deleted what the link led to');
    nothingLeft();
  } finally {
    await within(broker.stop(), 20_000, "the broker's stop");
  }
});

const RELEASE_CASES: [what: string, command: string][] = [
  ['puts a file in place of its worktree', 'exec d=$PWD; cd /; rm -rf "$d"; echo not a folder > "$d"'],
  ["breaks its worktree's .git file", 'exec echo "gitdir: /nowhere" > .git'],
];
for (const [what, command] of RELEASE_CASES) {
  test(`a worker that ${what}: the release still leaves no worktree or branch`, async () => {
    const { broker, root, nothingLeft } = setUp();
    try {
      const result = await within(root.invoke('coder', `${command}\nsay done`), 20_000, "the coder's task");
      assert.equal(result.success, true, result.error);
      await within(broker.stop(), 20_000, "the broker's stop");
      nothingLeft();
    } finally {
      await within(broker.stop(), 20_000, "the broker's stop");
    }
  });
}

test("a link put in place of a killed gateway's worktree: the prune removes the link, never what it leads to", async () => {
  const home = tempDir('chatty-hostile-git-');
  temporary.push(home);
  const repo = join(home, 'repo');
  execFileSync('mkdir', [repo]);
  gitRepoOnMain(repo);
  // A gateway holding a worktree, killed (children/worktree-holder.ts stands in for it).
  const holder = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./children/worktree-holder.ts', import.meta.url)), repo, '1'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: holder.stdout! }), 'line')) as [string];
  const [dir] = JSON.parse(line) as [string];
  const exited = once(holder, 'exit');
  holder.kill('SIGKILL');
  await exited;
  // Its worker (or a process it left) dressed a folder of the person's as the worktree and put a link in its place.
  const victim = join(home, 'victim');
  execFileSync('mkdir', [victim]);
  writeFileSync(join(victim, 'precious.txt'), "the person's work\n");
  writeFileSync(join(victim, '.git'), readFileSync(join(dir, '.git')));
  rmSync(dir, { recursive: true, force: true });
  symlinkSync(victim, dir);

  const report = await new GitWorktreeFactory().prune(repo);
  assert.equal(report.worktrees, 1);
  assert.equal(readFileSync(join(victim, 'precious.txt'), 'utf8'), "the person's work\n", 'the prune deleted what the link led to');
  assert.equal(existsSync(dir), false);
  const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, encoding: 'utf8' }).trim();
  assert.deepEqual(git('branch', '--format=%(refname:short)'), 'main');
});
