/**
 * A write killed mid-way without exiting (SIGKILL, the out-of-memory killer, the machine going down)
 * leaves its hidden file: the next write into that folder removes it, and only what is provably one:
 * a name sealed with this user's key naming a writer that is gone, a regular file with one name. Real
 * processes, real signals; the key in the test's own state folder.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { on, once } from 'node:events';
import { linkSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, unlinkSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers.js';
import { writerArgs } from './writer-args.js';

const WRITE_FILE = fileURLToPath(new URL('../../main/agents/scripted/write-file.ts', import.meta.url));
const WORKSPACE_PIN = fileURLToPath(new URL('../../main/agents/scripted/workspace-pin.ts', import.meta.url));
const STOPPED_WRITER = fileURLToPath(new URL('./stopped-writer.ts', import.meta.url));
/** unshare's namespaces need root, or a user namespace of the test's own (mapped to it) first. */
const AS_ROOT_OR_MAPPED = process.getuid?.() === 0 ? [] : ['--user', '--map-root-user'];

/** A process writing `path` in `ws` (`size` bytes) as a worker does, its key in `state`. */
function writer(ws: string, path: string, size: number, state: string): ChildProcess {
  return spawn(process.execPath, writerArgs(ws, path, size), { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, XDG_STATE_HOME: state } });
}

/** Starts a 64 MiB write of `path` and sends `signal` as soon as its hidden file is made; returns the process and the hidden file's name. */
async function signalledMidWrite(ws: string, path: string, state: string, signal: NodeJS.Signals): Promise<{ child: ChildProcess; hidden: string }> {
  const watcher = watch(ws);
  const child = writer(ws, path, 64 * 1024 * 1024, state);
  const ended = new AbortController(); // a child ending before it made the file fails the test, never hangs it
  child.once('exit', () => ended.abort(new Error('the writer ended before it made its hidden file')));
  let hidden = '';
  for await (const [, name] of on(watcher, 'change', { signal: ended.signal })) {
    if (String(name).startsWith(`.${path}.chatty-write-`)) {
      hidden = String(name);
      break;
    }
  }
  child.kill(signal);
  watcher.close();
  return { child, hidden };
}

/** A hidden file a SIGKILLed writer left in `ws` (a try whose kill came after the rename is tried again). */
async function leftByKilledWriter(ws: string, path: string, state: string): Promise<string> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const { child, hidden } = await signalledMidWrite(ws, path, state, 'SIGKILL');
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    if (readdirSync(ws).includes(hidden)) return hidden;
  }
  throw new Error('no SIGKILL landed before the rename');
}

/** One ordinary write of `path` into `ws` by a fresh process, to its end. */
async function nextWrite(ws: string, path: string, state: string): Promise<void> {
  const child = writer(ws, path, 3, state);
  const [code] = await once(child, 'exit');
  assert.equal(code, 0);
}

test('a hidden file a writer killed mid-write (SIGKILL) left is removed by the next write into that folder', { timeout: 180_000 }, async () => {
  // Before: nothing ever removed it (a name of random hex could not be told from one a worker made).
  const home = tempDir('chatty-write-left-');
  const ws = join(home, 'ws');
  const state = join(home, 'state');
  mkdirSync(join(ws, 'sub'), { recursive: true });
  writeFileSync(join(ws, 'notes.txt'), 'old\n');
  try {
    const left = await leftByKilledWriter(ws, 'notes.txt', state);
    assert.equal(readFileSync(join(ws, 'notes.txt'), 'utf8'), 'old\n');
    await nextWrite(ws, 'sub/other.txt', state); // another folder: this one is not looked at
    assert.deepEqual(readdirSync(ws).sort(), [left, 'notes.txt', 'sub'].sort());
    await nextWrite(ws, 'other.txt', state);
    assert.deepEqual(readdirSync(ws).sort(), ['notes.txt', 'other.txt', 'sub']);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test("what is not provably a dead writer's hidden file is left: look-alike names, a hard link, a link, a live writer's", { timeout: 180_000 }, async () => {
  const home = tempDir('chatty-write-left-alike-');
  const ws = join(home, 'ws');
  const state = join(home, 'state');
  const outside = join(home, 'outside.txt');
  mkdirSync(ws);
  writeFileSync(outside, "the person's file\n");
  writeFileSync(join(ws, 'notes.txt'), 'old\n');
  try {
    // Names as a branch commits them or a worker makes them without the key: the old shape, and the
    // sealed shape with a dead pid and a made-up seal.
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').replace(/[^0-9a-f]/g, '').slice(0, 16);
    const ns = /\d+/.exec(readlinkSync('/proc/self/ns/pid'))![0];
    const timeNs = /\d+/.exec(readlinkSync('/proc/self/ns/time'))![0];
    const alike = ['.notes.txt.chatty-write-0123456789ab', `.notes.txt.chatty-write-0123456789ab.4194300.1.${boot}.${ns}.${timeNs}.0123456789abcdef`];
    for (const name of alike) writeFileSync(join(ws, name), 'committed\n');
    // A dead writer's file with a second name; another's name given to a link to a file outside.
    const linked = await leftByKilledWriter(ws, 'notes.txt', state);
    linkSync(join(ws, linked), join(ws, 'second-name'));
    const swapped = await leftByKilledWriter(ws, 'notes.txt', state);
    unlinkSync(join(ws, swapped));
    symlinkSync(outside, join(ws, swapped));
    // A live writer's, stopped mid-write.
    const { child: live, hidden: liveHidden } = await signalledMidWrite(ws, 'live.txt', state, 'SIGSTOP');
    try {
      await nextWrite(ws, 'other.txt', state);
      for (const name of [...alike, linked, 'second-name', swapped, liveHidden]) assert.ok(readdirSync(ws).includes(name), `${name} was removed`);
      assert.equal(readlinkSync(join(ws, swapped)), outside);
      assert.equal(readFileSync(outside, 'utf8'), "the person's file\n");
    } finally {
      live.kill('SIGCONT');
    }
    const [code] = await once(live, 'exit');
    assert.equal(code, 0, 'the live writer, let go on, finished its write');
    assert.equal(readFileSync(join(ws, 'live.txt'), 'utf8').length, 64 * 1024 * 1024);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test("a file named like a write's hidden file is never written: a dead writer's name, copied, was written and then removed by the next write", { timeout: 180_000 }, async () => {
  // Before: a name seen while a write was in flight (a worker watching the workspace) is sealed; once
  // its writer was gone, an approved write of a file of that name was removed by the next write into
  // its folder, as a dead writer's hidden file.
  const home = tempDir('chatty-write-left-named-');
  const ws = join(home, 'ws');
  const state = join(home, 'state');
  mkdirSync(join(ws, 'sub'), { recursive: true });
  writeFileSync(join(ws, 'notes.txt'), 'old\n');
  try {
    const copied = await leftByKilledWriter(ws, 'notes.txt', state);
    unlinkSync(join(ws, copied));
    const paths = [copied, `sub/${copied}`, '.chatty-write-notes'];
    const script = `
      const { commitWrite, planWrite } = await import(${JSON.stringify(WRITE_FILE)});
      const { pinWorkspace } = await import(${JSON.stringify(WORKSPACE_PIN)});
      const ws = ${JSON.stringify(ws)};
      await pinWorkspace(ws);
      for (const path of ${JSON.stringify(paths)}) {
        await planWrite(ws, path, 'approved').then((plan) => console.log('plan: asks (' + plan.diffStat + ')'), (err) => console.log('plan: ' + err.name + ': ' + err.message));
        await commitWrite(ws, { path, file: ws + '/' + path, content: 'approved\\n', diffStat: '+1 -0' }).then(() => console.log('write: written'), (err) => console.log('write: ' + err.name + ': ' + err.message));
      }`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, XDG_STATE_HOME: state }, timeout: 170_000 });
    assert.equal(child.status, 0, child.stderr);
    const lines = child.stdout.trim().split('\n');
    assert.equal(lines.length, paths.length * 2, child.stdout);
    for (const line of lines) assert.match(line, /^(plan|write): WorkspaceRefusal: ".*" is named like the hidden file a write is made in/);
    assert.deepEqual(readdirSync(ws).sort(), ['notes.txt', 'sub']);
    assert.deepEqual(readdirSync(join(ws, 'sub')), []);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

interface StoppedWriterScene {
  before: boolean;
  after: boolean;
  next: number;
  live: number;
}

/**
 * stopped-writer.ts in `ws`, started under `under` (a command prefix), its other write under
 * `nextUnder`; tried again while the SIGSTOP came after the live writer's rename.
 */
function stoppedWriterScene(ws: string, under: string[], nextUnder: string[]): StoppedWriterScene {
  for (let attempt = 0; attempt < 5; attempt++) {
    rmSync(join(ws, 'live.txt'), { force: true });
    rmSync(join(ws, 'other.txt'), { force: true });
    const [command, ...args] = [...under, process.execPath, '--import', 'tsx', STOPPED_WRITER, JSON.stringify({ ws, nextUnder })];
    const run = spawnSync(command!, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 170_000 });
    assert.equal(run.status, 0, `${command} ${run.error ?? ''}`);
    const scene = JSON.parse(run.stdout.trim().split('\n').pop()!) as StoppedWriterScene;
    if (scene.before) return scene;
  }
  throw new Error('no SIGSTOP landed before the rename');
}

test("a live writer is not judged gone by a writer of its pid namespace whose /proc is another namespace's (unshare --pid without a /proc of its own)", { timeout: 180_000 }, () => {
  // Before: both wrote process.pid (the namespace's) in their names and read /proc/<pid>/stat of the
  // parent namespace's /proc: another process, so the stopped writer was judged gone, its hidden file
  // removed, and its write, let go on, failed ('changed while it was written').
  const home = tempDir('chatty-write-left-procns-');
  const ws = join(home, 'ws');
  mkdirSync(ws);
  try {
    const scene = stoppedWriterScene(ws, ['unshare', ...AS_ROOT_OR_MAPPED, '--pid', '--fork'], []);
    assert.deepEqual(scene, { before: true, after: true, next: 0, live: 0 });
    assert.equal(statSync(join(ws, 'live.txt')).size, 64 * 1024 * 1024);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('a live writer is not judged gone by a writer of another time namespace (start times read shifted: unshare --time --boottime)', { timeout: 180_000 }, () => {
  // Before: /proc/<pid>/stat's start time is shifted by the reader's time namespace's boot-time offset
  // (a container CRIU restored), so the writer there read another start and judged the live one gone.
  const home = tempDir('chatty-write-left-timens-');
  const ws = join(home, 'ws');
  mkdirSync(ws);
  try {
    const scene = stoppedWriterScene(ws, [], ['unshare', ...AS_ROOT_OR_MAPPED, '--time', '--boottime', '100000', '--fork']);
    assert.deepEqual(scene, { before: true, after: true, next: 0, live: 0 });
    assert.equal(statSync(join(ws, 'live.txt')).size, 64 * 1024 * 1024);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
