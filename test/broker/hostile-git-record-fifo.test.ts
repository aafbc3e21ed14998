/**
 * What the broker reads of git's worktree records, which a worker (running as the user) can
 * write: a record's `gitdir` made a fifo must not hang the broker (a read of a fifo with no writer
 * blocks one of libuv's four threads for good, and with it the repository's lock and `stop()`).
 * Git's own commands read it too, each ended after the factory's `gitTimeoutMs` (short here).
 * Real workers, real git, as in hostile-git-parent-link.test.ts.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { tempDir } from '../agents/helpers.js';
import { defuseFifo, repoIn, worktreeBroker } from './hostile-git-broker.js';
import { until, within } from './helpers.js';

const temporary: string[] = [];
after(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

/** Lets a reader blocked on the fifo go (a writer opens and closes it), so that a failed test does not hang the run. */
function releaseFifo(fifo: string): void {
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // no reader waits on it
  }
}

test("a fifo put as a worktree record's gitdir: a start refused for a link the worker swapped in still ends, the broker never reading the fifo", async () => {
  const home = tempDir('chatty-hostile-record-');
  temporary.push(home);
  const person = join(home, 'person');
  mkdirSync(person);
  const { repo, common } = repoIn(home);
  const folder = join(common, 'chatty-worktrees');
  const hook = join(common, 'hooks', 'reference-transaction');
  const fifo = join(common, 'worktrees', 'a-fifo', 'gitdir');
  const { broker, root } = worktreeBroker(repo, ['coder', 'reviewer'], () => {}, { gitTimeoutMs: 2_000 });
  try {
    // As in hostile-git-parent-link: the hook swaps the worktrees' folder for a link while git
    // makes the callee's worktree, so the broker looks through git's records for the one it must
    // forget; and the worker has put a fifo among them.
    // The fifo is made by a post-checkout hook, the last thing git's add runs: made
    // before, git's own add reads them (a stall bounded by gitTimeoutMs, not the broker's read).
    const postCheckout = join(common, 'hooks', 'post-checkout');
    const plant =
      `exec printf '%s\\n' '#!/bin/sh' '[ "$1" = committed ] || exit 0' '[ -e ${home}/swapped ] && exit 0' 'touch ${home}/swapped' ` +
      `'mv ${folder} ${folder}.moved && ln -s ${person} ${folder}' > ${hook} && chmod +x ${hook} && ` +
      `printf '%s\\n' '#!/bin/sh' '[ -e ${home}/swapped ] || exit 0' ` +
      `'mkdir -p ${join(common, 'worktrees', 'a-fifo')} && mkfifo ${fifo}' > ${postCheckout} && chmod +x ${postCheckout}`;
    const result = await within(root.invoke('coder', `${plant}\ninvoke reviewer exec pwd -P`), 30_000, "the coder's call");
    assert.equal(lstatSync(fifo).isFIFO(), true, 'the fifo was made');
    assert.equal(existsSync(join(home, 'swapped')), true, 'the swap ran');
    assert.equal(result.success, false, `the callee ran: ${result.response}`);
    assert.match(result.error ?? '', /git made it in \S*person\/reviewer-0, not directly in the worktrees' folder/);
    // The broker's own look through the records passed the fifo by; git's branch -D read it, and was ended.
    assert.match(result.error ?? '', /git's record of it is removed, its branch chatty\/reviewer-0 is left: git branch -D -- chatty\/reviewer-0 did not end within 2000 ms/);
  } finally {
    releaseFifo(fifo);
    await broker.stop();
  }
});

test("a fifo a worker put among git's worktree records holds its release's git: the broker's stop ends that git a grace later, not after gitTimeoutMs", async () => {
  const home = tempDir('chatty-hostile-release-');
  temporary.push(home);
  const { repo, common } = repoIn(home);
  const fifo = join(common, 'worktrees', 'a-fifo', 'gitdir');
  const lines: string[] = [];
  const { broker, root } = worktreeBroker(repo, ['coder'], (line) => lines.push(line), { gitTimeoutMs: 600_000 });
  try {
    // Every git command that lists the worktrees (the release's branch -D, worktree prune) opens
    // each record's gitdir, and an open of a fifo with no writer blocks.
    const call = root.invoke('coder', `exec mkdir -p ${join(common, 'worktrees', 'a-fifo')} && mkfifo ${fifo}`);
    call.catch(() => {});
    await until(() => existsSync(fifo), 'the fifo planted');
    // Before: stop() waited for the release, whose git waited out gitTimeoutMs (10 minutes here).
    await within(broker.stop(), 60_000, "the broker's stop");
    assert.ok(lines.some((line) => /stopping coder-0: .*was ended: what it was run for was given up/.test(line)), `the release's failure is logged: ${JSON.stringify(lines)}`);
  } finally {
    defuseFifo(fifo);
    await broker.stop();
  }
});

/** The command lines of our git processes running now, read from /proc (not the fifo: opening it would let its reader go). */
function gitsRunning(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmd.startsWith('git\0')) found.push(cmd.split('\0').join(' '));
    } catch {
      // gone
    }
  }
  return found;
}

test("a fifo a worker made of packed-refs holds a start's git (its base's rev-parse): the broker's stop ends it, not after gitTimeoutMs", async () => {
  const home = tempDir('chatty-hostile-start-refs-');
  temporary.push(home);
  const { repo, common } = repoIn(home);
  const fifo = join(common, 'packed-refs');
  const { broker, root } = worktreeBroker(repo, ['coder'], () => {}, { gitTimeoutMs: 600_000 });
  try {
    // What an earlier task's worker can leave behind (it runs as the user, in this repository):
    // git reads packed-refs to find the base (refs/tags/main first), and blocks on the fifo.
    execFileSync('mkfifo', [fifo]);
    const call = root.invoke('coder', 'exec pwd');
    call.catch(() => {});
    await until(() => gitsRunning().some((cmd) => cmd.includes('^{commit}')), "the start's rev-parse blocked on the fifo");
    // Before: the start's git had no signal, and stop() waited gitTimeoutMs (10 minutes here).
    await within(broker.stop(), 60_000, "the broker's stop");
    const result = await call;
    assert.equal(result.success, false);
  } finally {
    defuseFifo(fifo);
    await broker.stop();
  }
});

test("a start whose worktree add a fifo among git's records holds, given up by stop(): the cleanup of the add ends a grace later, not after gitTimeoutMs", async () => {
  const home = tempDir('chatty-hostile-start-discard-');
  temporary.push(home);
  const { repo, common } = repoIn(home);
  const fifo = join(common, 'worktrees', 'a-fifo', 'gitdir');
  const { broker, root } = worktreeBroker(repo, ['coder'], () => {}, { gitTimeoutMs: 600_000 });
  try {
    // A first task: the repository is pruned once (the prune's worktree list would read the fifo first).
    const first = await within(root.invoke('coder', 'exec pwd'), 60_000, 'the first task');
    assert.equal(first.success, true, first.error);
    // What that task's worker could have left (a background process of its, after its release).
    mkdirSync(join(common, 'worktrees', 'a-fifo'), { recursive: true });
    execFileSync('mkfifo', [fifo]);
    const call = root.invoke('coder', 'exec pwd');
    call.catch(() => {});
    await until(() => gitsRunning().some((cmd) => cmd.includes('worktree add')), "the second start's worktree add blocked on the fifo");
    // stop() ends the add at once (it has the start's signal); before, the cleanup's git
    // (worktree unlock, worktree prune: they read the same records) had none, and waited 10 minutes.
    await within(broker.stop(), 60_000, "the broker's stop").catch((err: Error) => {
      throw new Error(`${err.message}; git blocked meanwhile: ${gitsRunning().join(' | ')}`);
    });
  } finally {
    defuseFifo(fifo);
    await broker.stop();
  }
});
