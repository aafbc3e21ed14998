/**
 * A hostile worker puts a link ABOVE a worktree: in place of the worktrees' folder
 * (`.git/chatty-worktrees`), leading to a folder of the person's. The broker then removes a
 * worktree by a path that runs through the link (a prune of a forged record of a "dead gateway",
 * or the worker's own release): what the link leads to must never be removed. The worker's
 * approved command runs as the user, as in hostile-git.test.ts; real workers, real git.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { GitWorktreeFactory } from '../../main/broker/runners/index.js';
import { tempDir } from '../agents/helpers.js';
import { forgeDeadRecord, repoIn, worktreeBroker } from './hostile-git-broker.js';

const temporary: string[] = [];
after(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

/** A repository on `main` in a fresh home, and a folder of the person's (`person/`) next to it. */
function setUp() {
  const home = tempDir('chatty-hostile-parent-');
  temporary.push(home);
  const person = join(home, 'person');
  mkdirSync(person);
  return { home, person, ...repoIn(home) };
}

/** Puts `precious.txt` in the person's folder `dir`; `untouched()` says it is still there. */
function precious(dir: string, make = true): () => void {
  if (make) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'precious.txt'), "the person's work\n");
  }
  return () => assert.equal(readFileSync(join(dir, 'precious.txt'), 'utf8'), "the person's work\n", 'what the link led to was removed');
}

test("a link in place of the worktrees' folder and a forged dead gateway's record: the prune refuses, the person's folder stays", async () => {
  const { repo, person, common } = setUp();
  const untouched = precious(join(person, 'Documents'));
  // What the worker's approved command does: the worktrees' folder becomes a link to the person's
  // folder, and a record of a "killed gateway" (a pid that does not exist) names Documents in it.
  symlinkSync(person, join(common, 'chatty-worktrees'));
  forgeDeadRecord(common, 'evil', join(common, 'chatty-worktrees', 'Documents'));

  const lines: string[] = [];
  const report = await new GitWorktreeFactory({ log: (line) => lines.push(line) }).prune(repo);
  untouched();
  assert.equal(report.worktrees, 0);
  assert.equal(report.refused, 1);
  assert.match(lines.join('\n'), /refused .*chatty-worktrees.* is a symbolic link/);
});

test("a worker that puts a link in place of the worktrees' folder, to a folder of the person's with its own worktree's name: the release refuses, the person's folder stays", async () => {
  const { home, repo, person } = setUp();
  const lines: string[] = [];
  const { broker, root } = worktreeBroker(repo, ['coder'], (line) => lines.push(line));
  try {
    // The worker's folder is <repo>/.git/chatty-worktrees/<its name>: the person has a folder of
    // that name (made here by the command, as the test cannot know the name before).
    const swap =
      `exec d=$PWD; n=$(basename "$d"); w=$(dirname "$d"); cd /; echo $n > ${home}/leaf; mkdir ${person}/$n && echo "the person's work" > ${person}/$n/precious.txt && ` +
      `mv "$w" "$w.moved" && ln -s ${person} "$w"`;
    const result = await root.invoke('coder', `${swap}\nsay swapped`);
    assert.equal(result.success, true, result.error);
    assert.equal(result.response, '[exit code 0]\nswapped\n', 'the swap ran');
    await broker.stop();
    precious(join(person, readFileSync(join(home, 'leaf'), 'utf8').trim()), false)();
    assert.match(lines.join('\n'), /stopping coder-0: .* by its real path, not in the worktrees' folder .*: a link on its way, never followed/);
    assert.equal(lstatSync(join(repo, '.git', 'chatty-worktrees')).isSymbolicLink(), true, 'the link is left as it was');
  } finally {
    await broker.stop();
  }
});

test("a callee's worktree is never made through a link in place of the worktrees' folder: the call fails, nothing lands in the person's folder", async () => {
  const { repo, person } = setUp();
  const { broker, root } = worktreeBroker(repo, ['coder', 'reviewer']);
  try {
    // Its own worktree stays reachable by its path (the callee's workspace_root) through a link in the person's folder.
    const swap = `exec d=$PWD; n=$(basename "$d"); w=$(dirname "$d"); cd /; mv "$w" "$w.moved" && ln -s ${person} "$w" && ln -s "$w.moved/$n" ${person}/$n`;
    const result = await root.invoke('coder', `${swap}\ninvoke reviewer say reviewed`);
    assert.equal(result.success, false);
    assert.match(result.error ?? '', /a worktree for reviewer-0: the worktrees' folder .*chatty-worktrees is a symbolic link \(to .*person\), never followed/);
    assert.deepEqual(readdirSync(person), ['coder-0'], "a worktree was made in the person's folder");
  } finally {
    await broker.stop();
  }
});

test("a hook the worker planted swaps the worktrees' folder for a link while git makes a callee's worktree: the start is refused, git's record and branch of it go, nothing runs in it", async () => {
  const { home, repo, person, common } = setUp();
  const folder = join(common, 'chatty-worktrees');
  const hook = join(common, 'hooks', 'reference-transaction');
  const { broker, root } = worktreeBroker(repo, ['coder', 'reviewer']);
  try {
    // The coder's approved command plants the hook: once, when git has made the callee's branch
    // (after the broker checked the folder, before git makes the worktree's folder in it), the
    // worktrees' folder becomes a link to the person's folder.
    const plant =
      `exec printf '%s\\n' '#!/bin/sh' '[ "$1" = committed ] || exit 0' '[ -e ${home}/swapped ] && exit 0' 'touch ${home}/swapped' ` +
      `'mv ${folder} ${folder}.moved && ln -s ${person} ${folder}' > ${hook} && chmod +x ${hook}`;
    const result = await root.invoke('coder', `${plant}\ninvoke reviewer exec pwd -P`);
    assert.equal(result.success, false, `the callee ran: ${result.response}`);
    assert.match(result.error ?? '', /a worktree for reviewer-0: git made it in \S*person\/reviewer-0, not directly in the worktrees' folder \S*chatty-worktrees/);
    assert.equal(lstatSync(folder).isSymbolicLink(), true, 'the swap ran');
    // Git's record of it and its branch are gone; the folder git made in the person's folder is left (nothing is removed there).
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' });
    assert.doesNotMatch(git('worktree', 'list', '--porcelain'), /reviewer/);
    assert.equal(git('branch', '--list', 'chatty/reviewer*'), '');
    assert.deepEqual(readdirSync(person), ['reviewer-0']);
  } finally {
    await broker.stop();
  }
});
