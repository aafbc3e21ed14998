/**
 * A write approved as a new file gives it its name by `link` (never replacing a file made there
 * meanwhile), then removes its hidden name (`linkAsNew`). A writer killed between the two (SIGKILL,
 * the out-of-memory killer, the machine going down) left the file with two names, its own and the
 * hidden one: every later write of it was refused before anyone was asked (`has 2 names`), and the
 * sweep of dead writers' files (`removeAbandonedTemporaries`) left the hidden name, a file with two
 * names. What it left is made here by a real process that makes its sealed hidden file, links it to
 * its name and ends there, its key in the test's own state folder.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { linkSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers.js';
import { writerArgs } from './writer-args.js';

const TEMPORARY_NAME = fileURLToPath(new URL('../../main/agents/scripted/temporary-name.ts', import.meta.url));
const WRITE_FILE = fileURLToPath(new URL('../../main/agents/scripted/write-file.ts', import.meta.url));
const WORKSPACE_PIN = fileURLToPath(new URL('../../main/agents/scripted/workspace-pin.ts', import.meta.url));

/**
 * A process that does what a writer of the new file `path` in `ws` does up to its `link` (its sealed
 * hidden file made, `content` in it, linked to `path`) and stops there: ends (`then: 'end'`), as a
 * writer killed before its `unlink`, or waits until its stdin closes (`'wait'`: a live writer).
 * Resolves with the process and the hidden name once it is linked.
 */
async function linkedNotUnlinked(ws: string, path: string, content: string, state: string, then: 'end' | 'wait'): Promise<{ child: ChildProcess; hidden: string }> {
  const script = `
    const { linkSync, writeFileSync } = await import('node:fs');
    const { temporaryName } = await import(${JSON.stringify(TEMPORARY_NAME)});
    const ws = ${JSON.stringify(ws)};
    const hidden = temporaryName(${JSON.stringify(path)});
    writeFileSync(ws + '/' + hidden, ${JSON.stringify(content)}, { flag: 'wx', mode: 0o644 });
    linkSync(ws + '/' + hidden, ws + '/' + ${JSON.stringify(path)});
    console.log(hidden);
    if (${JSON.stringify(then)} === 'wait') process.stdin.resume();`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, XDG_STATE_HOME: state } });
  let said = '';
  child.stdout!.setEncoding('utf8');
  for await (const chunk of child.stdout!) {
    said += chunk;
    if (said.includes('\n')) break;
  }
  if (then === 'end' && child.exitCode === null) await once(child, 'exit');
  const hidden = said.trim();
  assert.match(hidden, /^\.(.+\.)?chatty-write-[0-9a-f]{12}\.\d+\.\d+\.[0-9a-f]{16}\.\d+\.\d+\.[0-9a-f]{16}$/, 'a sealed hidden name');
  assert.equal(statSync(join(ws, path)).nlink, 2);
  return { child, hidden };
}

/** One ordinary write of `path` into `ws` by a fresh process, to its end. */
async function nextWrite(ws: string, path: string, state: string): Promise<void> {
  const child = spawn(process.execPath, writerArgs(ws, path, 3), { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, XDG_STATE_HOME: state } });
  const [code] = await once(child, 'exit');
  assert.equal(code, 0);
}

/** A workspace `ws` in a fresh folder `home`, and the writers' state folder. */
function scene(prefix: string): { home: string; ws: string; state: string } {
  const home = tempDir(prefix);
  mkdirSync(join(home, 'ws'));
  return { home, ws: join(home, 'ws'), state: join(home, 'state') };
}

test("a new file whose writer was killed between its link and its unlink keeps its own name alone: the next write into its folder removes the hidden name", { timeout: 60_000 }, async () => {
  // Before: the hidden name stayed for good (the sweep left a file with two names).
  const { home, ws, state } = scene('chatty-write-second-name-');
  try {
    await linkedNotUnlinked(ws, 'notes.txt', 'approved\n', state, 'end');
    await nextWrite(ws, 'other.txt', state);
    assert.deepEqual(readdirSync(ws).sort(), ['notes.txt', 'other.txt']);
    assert.equal(readFileSync(join(ws, 'notes.txt'), 'utf8'), 'approved\n');
    assert.equal(statSync(join(ws, 'notes.txt')).nlink, 1);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

/** A name over 100 bytes: its hidden file is `.chatty-write-…`, which does not say it. */
const LONG = `${'n'.repeat(120)}.txt`;

for (const name of ['notes.txt', LONG]) {
  test(`a new file whose writer was killed between its link and its unlink can be written again: asked as it is, and written (${name.length > 100 ? 'a name over 100 bytes' : name})`, { timeout: 60_000 }, async () => {
    // Before: 'plan: WorkspaceRefusal: "notes.txt" has 2 names (hard links): …', for every write of it.
    const { home, ws, state } = scene('chatty-write-second-name-again-');
    try {
      await linkedNotUnlinked(ws, name, 'approved\n', state, 'end');
      const script = `
        const { commitWrite, planWrite } = await import(${JSON.stringify(WRITE_FILE)});
        const { pinWorkspace } = await import(${JSON.stringify(WORKSPACE_PIN)});
        const ws = ${JSON.stringify(ws)};
        await pinWorkspace(ws);
        const plan = await planWrite(ws, ${JSON.stringify(name)}, 'new').catch((err) => console.log('plan: ' + err.name + ': ' + err.message));
        if (plan) {
          console.log('plan: asks (' + plan.diffStat + ')');
          await commitWrite(ws, plan).then(() => console.log('write: written'), (err) => console.log('write: ' + err.name + ': ' + err.message));
        }`;
      const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, XDG_STATE_HOME: state }, timeout: 50_000 });
      assert.equal(run.status, 0, run.stderr);
      assert.deepEqual(run.stdout.trim().split('\n'), ['plan: asks (+1 -1)', 'write: written']);
      assert.deepEqual(readdirSync(ws), [name]);
      assert.equal(readFileSync(join(ws, name), 'utf8'), 'new\n');
      assert.equal(statSync(join(ws, name)).nlink, 1);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
}

test("a hidden name with a second name that is not only its file's own is left: a live writer's, a third name, another file's", { timeout: 60_000 }, async () => {
  const { home, ws, state } = scene('chatty-write-second-name-kept-');
  const live = await linkedNotUnlinked(ws, 'notes.txt', 'live\n', state, 'wait');
  try {
    // A dead writer's file linked to its own name and to a third one.
    mkdirSync(join(ws, 'three'));
    const three = await linkedNotUnlinked(join(ws, 'three'), 'notes.txt', 'three\n', state, 'end');
    linkSync(join(ws, 'three', 'notes.txt'), join(ws, 'three', 'third-name'));
    // A dead writer's file whose second name is another name than its own (notes.txt there is another file).
    mkdirSync(join(ws, 'other'));
    const other = await linkedNotUnlinked(join(ws, 'other'), 'notes.txt', 'other\n', state, 'end');
    linkSync(join(ws, 'other', other.hidden), join(ws, 'other', 'another-name'));
    rmSync(join(ws, 'other', 'notes.txt'));
    writeFileSync(join(ws, 'other', 'notes.txt'), 'a file of its own\n');
    await nextWrite(ws, 'other.txt', state);
    await nextWrite(ws, 'three/other.txt', state);
    await nextWrite(ws, 'other/other.txt', state);
    assert.ok(readdirSync(ws).includes(live.hidden), "the live writer's hidden name was removed");
    assert.deepEqual(readdirSync(join(ws, 'three')).sort(), [three.hidden, 'notes.txt', 'other.txt', 'third-name'].sort());
    assert.deepEqual(readdirSync(join(ws, 'other')).sort(), [other.hidden, 'another-name', 'notes.txt', 'other.txt'].sort());
  } finally {
    live.child.stdin!.end();
    if (live.child.exitCode === null) await once(live.child, 'exit');
    rmSync(home, { recursive: true, force: true });
  }
});
