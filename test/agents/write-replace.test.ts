/**
 * An approved write replaces the file whole or not at all: the new content is written to a file of
 * its own beside it, in the pinned folder, and renamed over the old one only once it is whole. A
 * write that fails part way (here the process's file size limit, `ulimit -f`, EFBIG after 32 KiB)
 * leaves the old content as it was and nothing beside it; the file keeps its mode. Real files, a
 * real process with a real limit.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { on, once } from 'node:events';
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pinWorkspace } from '../../main/agents/scripted/workspace-pin.js';
import { commitWrite, planWrite } from '../../main/agents/scripted/write-file.js';
import { tempDir } from './helpers.js';

const WRITE_FILE = fileURLToPath(new URL('../../main/agents/scripted/write-file.ts', import.meta.url));
const WORKSPACE_PIN = fileURLToPath(new URL('../../main/agents/scripted/workspace-pin.ts', import.meta.url));

test('a write that fails part way (the file size limit) leaves the old content whole and nothing beside it', { timeout: 180_000 }, () => {
  // Before: the file was truncated and then written in place: EFBIG after 32 KiB left 32 KiB of the
  // new text and none of the old, and the error was raw.
  const home = tempDir('chatty-write-replace-');
  const ws = join(home, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'notes.txt'), "the person's notes\n");
  const script = `
    const { commitWrite } = await import(${JSON.stringify(WRITE_FILE)});
    const { pinWorkspace } = await import(${JSON.stringify(WORKSPACE_PIN)});
    const release = await pinWorkspace(${JSON.stringify(ws)});
    try {
      await commitWrite(${JSON.stringify(ws)}, { path: 'notes.txt', file: ${JSON.stringify(join(ws, 'notes.txt'))}, content: 'x'.repeat(100_000), diffStat: '+1 -1' });
      console.log('written');
    } catch (err) { console.log(err.name + ': ' + err.message); }
    finally { await release(); }`;
  try {
    // dash's ulimit -f counts 512-byte blocks: 64 is 32 KiB.
    const child = spawnSync('/bin/sh', ['-c', 'ulimit -f 64 && exec "$0" "$@"', process.execPath, '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 170_000 });
    assert.equal(child.status, 0, child.stderr.slice(0, 500));
    assert.match(child.stdout, /^WorkspaceRefusal: "notes\.txt" could not be written \(EFBIG\b.*\): the file is as it was/m);
    assert.equal(readFileSync(join(ws, 'notes.txt'), 'utf8'), "the person's notes\n");
    assert.deepEqual(readdirSync(ws), ['notes.txt']);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('a replaced file keeps its permissions (an executable script stays executable) but no set-user-id bit; a new one is made as before', { timeout: 180_000 }, async () => {
  const home = tempDir('chatty-write-mode-');
  const ws = join(home, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'run.sh'), 'echo old\n');
  chmodSync(join(ws, 'run.sh'), 0o4750);
  const release = await pinWorkspace(ws);
  try {
    await commitWrite(ws, await planWrite(ws, 'run.sh', 'echo new'));
    await commitWrite(ws, await planWrite(ws, 'sub/new.txt', 'new'));
    assert.equal(readFileSync(join(ws, 'run.sh'), 'utf8'), 'echo new\n');
    assert.equal(statSync(join(ws, 'run.sh')).mode & 0o7777, 0o750);
    assert.equal(readFileSync(join(ws, 'sub', 'new.txt'), 'utf8'), 'new\n');
    assert.deepEqual(readdirSync(ws).sort(), ['run.sh', 'sub']);
  } finally {
    await release();
    rmSync(home, { recursive: true, force: true });
  }
});

test("a replaced file keeps its owner and group (a file of the person's replaced by a gateway running as root stays theirs)", { timeout: 180_000 }, async () => {
  // Before: the new file was the writer's (root's here), so the person could no longer edit their own
  // file; a file whose group was kept narrow got the writer's group with the same group bits. Root
  // gives the file another owner; another user gives it another of their groups, where they have one.
  const root = process.getuid?.() === 0;
  const otherGroup = process.getgroups?.().find((gid) => gid !== process.getegid?.());
  const owner = root ? { uid: 65534, gid: 65534 } : { uid: process.getuid!(), gid: otherGroup ?? process.getegid!() };
  const home = tempDir('chatty-write-owner-');
  const ws = join(home, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'notes.txt'), 'old\n');
  chownSync(join(ws, 'notes.txt'), owner.uid, owner.gid);
  chmodSync(join(ws, 'notes.txt'), 0o640);
  const release = await pinWorkspace(ws);
  try {
    await commitWrite(ws, await planWrite(ws, 'notes.txt', 'new'));
    assert.equal(readFileSync(join(ws, 'notes.txt'), 'utf8'), 'new\n');
    const { uid, gid, mode } = statSync(join(ws, 'notes.txt'));
    assert.deepEqual({ uid, gid, mode: mode & 0o7777 }, { ...owner, mode: 0o640 });
    assert.deepEqual(readdirSync(ws), ['notes.txt']);
  } finally {
    await release();
    rmSync(home, { recursive: true, force: true });
  }
});

test("the new file of a write is never open to a group the old file is not in, even before it has the old file's group", { timeout: 180_000 }, async () => {
  // Before: the new file was made with the old file's permission bits (0640) in the writer's group
  // (root's here, or a setgid folder's) and given the old file's group only after: a member of the
  // writer's group that opened it then (inotify) kept a descriptor and read the approved content
  // (run as a user of that group, 380 of 400 writes were read: /tmp/s9-worker/f1-group-window.test.ts).
  // Each hidden file is looked at as it appears: any group or other bit while its group is not yet
  // the old file's is that window.
  const root = process.getuid?.() === 0;
  const otherGroup = root ? 65534 : process.getgroups?.().find((gid) => gid !== process.getegid?.());
  const home = tempDir('chatty-write-group-window-');
  const ws = join(home, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'notes.txt'), 'old\n');
  if (otherGroup !== undefined) chownSync(join(ws, 'notes.txt'), root ? 65534 : process.getuid!(), otherGroup);
  chmodSync(join(ws, 'notes.txt'), 0o640);
  const oldGid = statSync(join(ws, 'notes.txt')).gid;
  const script = `
    const { commitWrite } = await import(${JSON.stringify(WRITE_FILE)});
    const { pinWorkspace } = await import(${JSON.stringify(WORKSPACE_PIN)});
    const ws = ${JSON.stringify(ws)};
    await pinWorkspace(ws);
    for (let i = 0; i < 200; i++) await commitWrite(ws, { path: 'notes.txt', file: ws + '/notes.txt', content: 'new ' + i + '\\n', diffStat: '+1 -1' });`;
  const seen: { gid: number; mode: number }[] = [];
  const watcher = watch(ws, (_event, name) => {
    if (!String(name).includes('.chatty-write-')) return;
    try {
      const { gid, mode } = statSync(join(ws, String(name)));
      seen.push({ gid, mode: mode & 0o777 });
    } catch {
      // renamed already
    }
  });
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'inherit', 'inherit'] });
    const [code] = await once(child, 'exit');
    assert.equal(code, 0);
    assert.ok(seen.length > 0, 'no hidden file was seen');
    const open = seen.filter((file) => file.gid !== oldGid && (file.mode & 0o077) !== 0);
    assert.deepEqual(open, [], `${open.length} of ${seen.length} hidden files seen were open to group ${open[0]?.gid} before they were the old file's group's (${oldGid})`);
    assert.equal(readFileSync(join(ws, 'notes.txt'), 'utf8'), 'new 199\n');
    const { gid, mode } = statSync(join(ws, 'notes.txt'));
    assert.deepEqual({ gid, mode: mode & 0o777 }, { gid: oldGid, mode: 0o640 });
  } finally {
    watcher.close();
    rmSync(home, { recursive: true, force: true });
  }
});

test('a worker told to stop (SIGTERM) in the middle of a write leaves the old file whole and nothing beside it', { timeout: 180_000 }, async () => {
  // Before: the worker exits at once on SIGTERM (process.exit, as `chatty-gateway worker` does), and
  // the hidden file the write was being made in stayed in the workspace for good.
  const home = tempDir('chatty-write-stopped-');
  const ws = join(home, 'ws');
  mkdirSync(ws);
  const old = "the person's notes\n";
  writeFileSync(join(ws, 'notes.txt'), old);
  const script = `
    process.once('SIGTERM', () => process.exit(143)); // as the worker command does
    const { commitWrite } = await import(${JSON.stringify(WRITE_FILE)});
    const { pinWorkspace } = await import(${JSON.stringify(WORKSPACE_PIN)});
    const ws = ${JSON.stringify(ws)};
    await pinWorkspace(ws);
    const content = 'x'.repeat(64 * 1024 * 1024);
    console.log('ready');
    await commitWrite(ws, { path: 'notes.txt', file: ws + '/notes.txt', content, diffStat: '+1 -1' });
    console.log('written');`;
  try {
    // Stopped until once the signal lands before the rename (the old file still there): a few tries at most.
    let stoppedMidWay = false;
    for (let attempt = 0; attempt < 5 && !stoppedMidWay; attempt++) {
      writeFileSync(join(ws, 'notes.txt'), old);
      const watcher = watch(ws);
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = once(child, 'exit');
      const ended = new AbortController(); // a child ending before it made the file fails the test, never hangs it
      void exited.then(() => ended.abort(new Error('the child ended before it made the hidden file')));
      // Told to stop as soon as the hidden file is made (inotify), while 64 MiB are written to it.
      for await (const event of on(watcher, 'change', { signal: ended.signal })) {
        if (String(event[1]).includes('.chatty-write-')) break;
      }
      watcher.close();
      child.kill('SIGTERM');
      const [code] = await exited;
      assert.equal(code, 143);
      stoppedMidWay = readFileSync(join(ws, 'notes.txt'), 'utf8') === old;
      assert.deepEqual(readdirSync(ws), ['notes.txt']);
    }
    assert.ok(stoppedMidWay, 'the signal never landed before the rename');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
