/**
 * An approved write lands on the file the person approved, never on another name of another file:
 * a process sharing the workspace (another worker, a worker's background process) that swaps the
 * path between a regular file and a hard link to a file outside, as fast as it can, must never have
 * the write land outside. The check before the write is a path's; the file written is judged by
 * what was opened (fstat of the open descriptor), before anything in it is changed. Real files, a
 * real racing process.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pinWorkspace } from '../../main/agents/scripted/workspace-pin.js';
import { commitWrite, planWrite, type PlannedWrite } from '../../main/agents/scripted/write-file.js';
import type { BrokerOptions } from '../../main/broker/index.js';
import { FOLDER_SWAPPER, startScripted, stopRacer, tempDir } from './helpers.js';

/** Swaps `<ws>/notes.txt` between a regular file and a hard link to `outside`, until killed. */
const SWAPPER = `
const fs = require('node:fs');
const [ws, outside] = process.argv.slice(1);
const file = ws + '/notes.txt', link = ws + '/notes.link', plain = ws + '/notes.plain';
process.stdout.write('go\\n');
for (;;) {
  try { fs.rmSync(link, { force: true }); fs.linkSync(outside, link); fs.renameSync(link, file); } catch {}
  try { fs.writeFileSync(plain, 'plain\\n'); fs.renameSync(plain, file); } catch {}
}`;

test('a write whose file is swapped for a hard link to a file outside the workspace while it is written never changes that file', { timeout: 180_000 }, async () => {
  const home = tempDir('chatty-write-race-');
  const ws = join(home, 'ws');
  mkdirSync(ws);
  const outside = join(home, 'person.txt');
  writeFileSync(outside, 'the person\'s own\n');
  writeFileSync(join(ws, 'notes.txt'), 'plain\n');
  // Committed again and again over the files the swapper makes: the path's race, not the approved
  // file's (a plan checks that its file is the one its stat was counted against: none would be written).
  const plan: PlannedWrite = { ...(await planWrite(ws, 'notes.txt', 'written by the agent')), against: undefined };
  const swapper = spawn(process.execPath, ['-e', SWAPPER, ws, outside], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise((resolve) => swapper.stdout.once('data', resolve));
    let written = 0;
    for (let i = 0; i < 3000 && readFileSync(outside, 'utf8') === 'the person\'s own\n'; i++) {
      await commitWrite(ws, plan).then(() => written++, () => {});
    }
    assert.equal(readFileSync(outside, 'utf8'), 'the person\'s own\n', `the write landed on the file outside (after ${written} writes)`);
    assert.ok(written > 0, 'no write was made at all: the race did not let a plain file be written');
  } finally {
    await stopRacer(swapper);
    rmSync(home, { recursive: true, force: true });
  }
});


/**
 * `<home>/ws/sub` and `<home>/outside`, and the FOLDER_SWAPPER exchanging sub with a link to outside
 * (or to the folder `linkTo` names; `prepare` runs before it starts).
 */
async function parentSwap(prefix: string, prepare: (ws: string, outsideDir: string) => Promise<void> | void = () => {}, linkTo: (ws: string, outsideDir: string) => string = (_, outsideDir) => outsideDir) {
  const home = tempDir(prefix);
  const ws = join(home, 'ws');
  const outsideDir = join(home, 'outside');
  mkdirSync(join(ws, 'sub'), { recursive: true });
  mkdirSync(outsideDir);
  await prepare(ws, outsideDir);
  const swapper = spawn('python3', ['-c', FOLDER_SWAPPER, join(ws, 'sub'), linkTo(ws, outsideDir)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve) => swapper.stdout.once('data', resolve));
  const end = async (): Promise<void> => {
    await stopRacer(swapper);
    rmSync(home, { recursive: true, force: true });
  };
  return { ws, outsideDir, end };
}

test('a write to sub/notes.txt never lands outside when sub is swapped for a symlink to a folder outside while it is written (Linux)', { timeout: 180_000, skip: process.platform !== 'linux' ? 'renameat2 and /proc/self/fd are Linux' : false }, async () => {
  let plan!: PlannedWrite;
  const { ws, outsideDir, end } = await parentSwap('chatty-write-parent-race-', async (ws, outsideDir) => {
    writeFileSync(join(outsideDir, 'notes.txt'), "the person's own\n");
    writeFileSync(join(ws, 'sub', 'notes.txt'), 'plain\n');
    // Committed again and again: the folders' race, not the approved file's (see above).
    plan = { ...(await planWrite(ws, 'sub/notes.txt', 'written by the agent')), against: undefined };
  });
  const outside = join(outsideDir, 'notes.txt');
  try {
    let written = 0;
    let i = 0;
    // Before: the file outside was written after 11 to 71 tries.
    for (; i < 2000 && readFileSync(outside, 'utf8') === "the person's own\n"; i++) {
      await commitWrite(ws, plan).then(() => written++, () => {});
    }
    assert.equal(readFileSync(outside, 'utf8'), "the person's own\n", `the write landed on the file outside (after ${i} tries, ${written} writes)`);
    assert.deepEqual(readdirSync(outsideDir), ['notes.txt'], 'nothing was created outside');
    assert.ok(written > 0, 'some writes went through, to the workspace');
  } finally {
    await end();
  }
});

test('a write to sub/<new folder>/notes.txt never makes a folder outside when sub is swapped for a symlink to a folder outside while the folder is made (Linux)', { timeout: 180_000, skip: process.platform !== 'linux' ? 'renameat2 and /proc/self/fd are Linux' : false }, async () => {
  const { ws, outsideDir, end } = await parentSwap('chatty-write-mkdir-race-');
  try {
    let written = 0;
    let i = 0;
    // Each try a folder not made yet: commitWrite makes it (createParents) while sub swaps.
    for (; i < 2000 && readdirSync(outsideDir).length === 0; i++) {
      const path = `sub/new-${i}/notes.txt`;
      await commitWrite(ws, { path, file: join(ws, path), content: 'written by the agent\n', diffStat: '+1 -0' }).then(() => written++, () => {});
    }
    assert.deepEqual(readdirSync(outsideDir), [], `a folder was made outside (after ${i} tries, ${written} writes)`);
    assert.ok(written > 0, 'some writes went through, to the workspace');
  } finally {
    await end();
  }
});

test('a write to sub/pre-commit never lands on .husky/pre-commit when sub is swapped for a symlink to .husky (inside the workspace) while it is checked (Linux)', { timeout: 180_000, skip: process.platform !== 'linux' ? 'renameat2 is Linux' : false }, async () => {
  // The check read realpath(sub) while it was the link (.husky, inside: passed), then isLink(sub)
  // once it was the folder again (passed), and went on from the realpath: the approved write to
  // sub/pre-commit wrote .husky/pre-commit (within 8 tries before).
  const { ws, end } = await parentSwap('chatty-write-inside-link-race-', (ws) => mkdirSync(join(ws, '.husky')), (ws) => join(ws, '.husky'));
  const hook = join(ws, '.husky', 'pre-commit');
  try {
    let written = 0;
    let i = 0;
    for (; i < 2000 && !existsSync(hook); i++) {
      const path = 'sub/pre-commit';
      await commitWrite(ws, { path, file: join(ws, path), content: 'echo written by the agent\n', diffStat: '+1 -0' }).then(() => written++, () => {});
    }
    assert.equal(existsSync(hook), false, `.husky/pre-commit was written (after ${i} tries, ${written} writes)`);
    assert.ok(written > 0, 'some writes went through, to sub/pre-commit');
  } finally {
    await end();
  }
});

/**
 * `<home>/ws`, pinned as a task pins its workspace, and `<home>/outside`, and the FOLDER_SWAPPER
 * exchanging ws with a link to outside (`prepare` runs before it starts).
 */
async function pinnedRootSwap(prefix: string, prepare: (ws: string, outsideDir: string) => void = () => {}) {
  const home = tempDir(prefix);
  const ws = join(home, 'ws');
  const outsideDir = join(home, 'outside');
  mkdirSync(ws);
  mkdirSync(outsideDir);
  prepare(ws, outsideDir);
  const release = await pinWorkspace(ws);
  const swapper = spawn('python3', ['-c', FOLDER_SWAPPER, ws, outsideDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve) => swapper.stdout.once('data', resolve));
  const end = async (): Promise<void> => {
    await stopRacer(swapper);
    await release();
    rmSync(home, { recursive: true, force: true });
  };
  return { ws, outsideDir, end };
}

test('a write to notes.txt never lands outside when the workspace itself is swapped for a symlink to a folder outside while it is written, once the task has pinned it (Linux)', { timeout: 180_000, skip: process.platform !== 'linux' ? 'renameat2 and /proc/self/fd are Linux' : false }, async () => {
  // The workspace's parent (<repo>/.git/chatty-worktrees) is the user's: a process sharing the
  // workspace can exchange the workspace with a link. Each write took realpath(workspace) afresh and
  // wrote notes.txt outside (within 4 tries before). The agents pin their workspace as a task starts.
  const { ws, outsideDir, end } = await pinnedRootSwap('chatty-write-root-race-');
  try {
    let written = 0;
    let i = 0;
    for (; i < 2000 && readdirSync(outsideDir).length === 0; i++) {
      const path = i % 2 === 0 ? 'notes.txt' : `new-${i}/notes.txt`;
      await commitWrite(ws, { path, file: join(ws, path), content: 'written by the agent\n', diffStat: '+1 -0' }).then(() => written++, () => {});
    }
    assert.deepEqual(readdirSync(outsideDir), [], `something was written outside (after ${i} tries, ${written} writes)`);
    assert.ok(written > 0, 'some writes went through, to the workspace');
  } finally {
    await end();
  }
});

test('the diff stat a person is shown is read from the pinned workspace, never through the workspace swapped for a symlink to a folder outside (Linux)', { timeout: 180_000, skip: process.platform !== 'linux' ? 'renameat2 and /proc/self/fd are Linux' : false }, async () => {
  // Before: the old file was read by its path, and the stat counted outside/notes.txt's three lines
  // (`+1 -3`) for the approval of a write to the workspace's one-line notes.txt, within a few tries.
  const { ws, end } = await pinnedRootSwap('chatty-diffstat-root-race-', (ws, outsideDir) => {
    writeFileSync(join(ws, 'notes.txt'), 'the workspace\n');
    writeFileSync(join(outsideDir, 'notes.txt'), "the\nperson's\nown\n");
  });
  const stats = new Map<string, number>();
  try {
    for (let i = 0; i < 2000 && stats.size < 2; i++) {
      await planWrite(ws, 'notes.txt', 'the workspace, changed').then(
        (plan) => stats.set(plan.diffStat, (stats.get(plan.diffStat) ?? 0) + 1),
        () => {},
      );
    }
  } finally {
    await end();
  }
  assert.deepEqual([...stats.keys()], ['+1 -1'], `the stats shown: ${JSON.stringify([...stats])}`);
});

/**
 * A scripted broker whose agent `a` approves everything, and whose root, once the task asks (its
 * workspace pinned by then), starts the FOLDER_SWAPPER exchanging the workspace with a link to
 * `outside` (a folder beside it) before it answers. `stop()` stops the swapper and the broker.
 */
function swappedOnceItAsks(broker: BrokerOptions = {}) {
  const fabric = startScripted(['a'], { approve: () => 'approved' }, { broker });
  const outsideDir = join(fabric.workspaces.parent, 'outside');
  mkdirSync(outsideDir);
  let swapper: ReturnType<typeof spawn> | undefined;
  fabric.root.onQuestion(async (request) => {
    swapper = spawn('python3', ['-c', FOLDER_SWAPPER, fabric.workspaces.dir(request.asker.agent), outsideDir], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((resolve) => swapper!.stdout!.once('data', resolve));
    return request.questions.map((q) => ({ id: q.id, answer: 'go' }));
  });
  return {
    fabric,
    outsideDir,
    swapped: () => swapper !== undefined,
    async stop() {
      await stopRacer(swapper);
      await fabric.close();
    },
  };
}

test('the scripted agent pins its workspace as its task starts: a process exchanging the workspace with a link to a folder outside mid-task never has a write land outside (Linux)', { timeout: 180_000, skip: process.platform !== 'linux' ? 'renameat2 and /proc/self/fd are Linux' : false }, async () => {
  const { fabric, outsideDir, swapped, stop } = swappedOnceItAsks();
  try {
    const result = await fabric.invoke('a', `ask ready?\n${'write notes.txt written by the agent\n'.repeat(300)}`);
    assert.ok(swapped(), 'the question was asked');
    assert.deepEqual(readdirSync(outsideDir), [], `something was written outside (${result.error ?? 'completed'})`);
    assert.ok(fabric.approvals.length > 1, `writes were approved and made (${fabric.approvals.length}: ${result.error})`);
  } finally {
    await stop();
  }
});

test('the scripted agent runs an approved command in its pinned workspace: a process exchanging the workspace with a link to a folder outside never has the command run there (Linux)', { timeout: 180_000, skip: process.platform !== 'linux' ? 'renameat2 and /proc/self/fd are Linux' : false }, async () => {
  // Before: the command ran in the workspace by its path, and `touch marker` made outside/marker
  // (within 20 commands). The call rate raised so that 60 approvals go through.
  const { fabric, outsideDir, swapped, stop } = swappedOnceItAsks({ serve: { limits: { callsPerSecond: 1_000, burst: 1_000 } } });
  try {
    const result = await fabric.invoke('a', `ask ready?\n${'exec touch marker\n'.repeat(60)}`);
    assert.ok(swapped(), 'the question was asked');
    assert.deepEqual(readdirSync(outsideDir), [], `a command ran outside (${result.error ?? 'completed'})`);
    assert.equal(result.success, true, result.error);
    assert.equal(fabric.approvals.length, 60);
  } finally {
    await stop();
  }
});
