/**
 * An approved write replaces a file by a new one made beside it (write-replace.test.ts), which needs
 * only its folder's write permission. The file's own permissions still decide: a file the writer may
 * not write is refused, as it was when the file was written in place, and so is a file in a folder
 * the writer may not write, before the person is asked, saying why. Run as a user who is not root
 * (root may write anything): as root the test drops to nobody (setpriv); another user's file can only
 * be set up as root.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers.js';

const WRITE_FILE = fileURLToPath(new URL('../../main/agents/scripted/write-file.ts', import.meta.url));
const WORKSPACE_PIN = fileURLToPath(new URL('../../main/agents/scripted/workspace-pin.ts', import.meta.url));
const WORKSPACE_PATH = fileURLToPath(new URL('../../main/agents/scripted/workspace-path.ts', import.meta.url));
const ROOT = process.getuid?.() === 0;
const NOBODY = 65534;

/**
 * Each path planned (`plan: …`: what the person would be asked, or the refusal), then written with a
 * plan made by hand (`write: …`), then replaced without the path's check (`replace: …`: the old file
 * judged by what is opened, as when it changed after the check), by a process that is not root,
 * pinned as a task is.
 */
function planAndWrite(ws: string, paths: string[]): string {
  const script = `
    const { commitWrite, planWrite } = await import(${JSON.stringify(WRITE_FILE)});
    const { pinWorkspace } = await import(${JSON.stringify(WORKSPACE_PIN)});
    const { replaceFileContent } = await import(${JSON.stringify(WORKSPACE_PATH)});
    const ws = ${JSON.stringify(ws)};
    const release = await pinWorkspace(ws);
    const said = (err) => err.name + ': ' + err.message;
    for (const path of ${JSON.stringify(paths)}) {
      await planWrite(ws, path, 'replaced').then((plan) => console.log(path + ' plan: asks (' + plan.diffStat + ')'), (err) => console.log(path + ' plan: ' + said(err)));
      await commitWrite(ws, { path, file: ws + '/' + path, content: 'replaced\\n', diffStat: '+1 -1' }).then(() => console.log(path + ' write: written'), (err) => console.log(path + ' write: ' + said(err)));
      await replaceFileContent(ws, ws + '/' + path, path, 'replaced\\n').then(() => console.log(path + ' replace: written'), (err) => console.log(path + ' replace: ' + said(err)));
    }
    await release();`;
  const node = [process.execPath, '--import', 'tsx', '--input-type=module', '-e', script];
  const [command, ...args] = ROOT ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...node] : node;
  const child = spawnSync(command!, args, { encoding: 'utf8', cwd: fileURLToPath(new URL('../..', import.meta.url)), timeout: 170_000 });
  assert.equal(child.status, 0, child.stderr.slice(0, 500));
  return child.stdout;
}

/** A workspace the writer owns (nobody's, as root). */
function workspace(home: string): string {
  const ws = join(home, 'ws');
  mkdirSync(ws);
  if (ROOT) {
    chownSync(home, NOBODY, NOBODY);
    chownSync(ws, NOBODY, NOBODY);
  }
  return ws;
}

function mine(path: string): void {
  if (ROOT) chownSync(path, NOBODY, NOBODY);
}

test('a file the writer may not write is refused before the person is asked, and never replaced', { timeout: 180_000 }, () => {
  // Before: replaced (the folder's permission was all a rename asked), and with it made the writer's.
  const home = tempDir('chatty-write-permissions-');
  const ws = workspace(home);
  writeFileSync(join(ws, 'ro.txt'), 'read-only\n');
  mine(join(ws, 'ro.txt'));
  chmodSync(join(ws, 'ro.txt'), 0o444);
  const paths = ['ro.txt'];
  if (ROOT) {
    writeFileSync(join(ws, 'theirs.txt'), "root's\n"); // root's, 0644: nobody may read it, not write it
    writeFileSync(join(ws, 'shared.txt'), "root's, anyone may write\n"); // nobody may write it, not make it theirs
    chmodSync(join(ws, 'shared.txt'), 0o666);
    writeFileSync(join(ws, 'grouped.txt'), "nobody's, group root\n"); // nobody may write it, not give a new file group root
    chownSync(join(ws, 'grouped.txt'), NOBODY, 0);
    chmodSync(join(ws, 'grouped.txt'), 0o664);
    paths.push('theirs.txt', 'shared.txt', 'grouped.txt');
  }
  try {
    const out = planAndWrite(ws, paths);
    assert.match(out, /^ro\.txt plan: WorkspaceRefusal: "ro\.txt" is a file this user may not write \(EACCES\)/m);
    assert.match(out, /^ro\.txt write: WorkspaceRefusal: "ro\.txt" is a file this user may not write \(EACCES\)/m);
    assert.match(out, /^ro\.txt replace: WorkspaceRefusal: "ro\.txt" is a file this user may not write \(EACCES\)/m);
    assert.equal(readFileSync(join(ws, 'ro.txt'), 'utf8'), 'read-only\n');
    if (ROOT) {
      assert.match(out, /^theirs\.txt plan: WorkspaceRefusal: "theirs\.txt" is a file this user may not write \(EACCES\)/m);
      assert.match(out, /^theirs\.txt write: WorkspaceRefusal: "theirs\.txt" is a file this user may not write/m);
      assert.match(out, /^theirs\.txt replace: WorkspaceRefusal: "theirs\.txt" is a file this user may not write/m);
      // Before (F2 of the review of e8b5ce8): 'shared.txt plan: asks (+1 -1)', refused only once approved.
      for (const step of ['plan', 'write', 'replace']) {
        assert.match(out, new RegExp(`^shared\\.txt ${step}: WorkspaceRefusal: "shared\\.txt" could not be written: it is replaced by a new file, which this user cannot give its owner and group \\(user 0, group 0\\): the file is as it was`, 'm'));
        assert.match(out, new RegExp(`^grouped\\.txt ${step}: WorkspaceRefusal: "grouped\\.txt" could not be written: it is replaced by a new file, which this user cannot give its owner and group \\(user ${NOBODY}, group 0\\)`, 'm'));
      }
      assert.equal(readFileSync(join(ws, 'grouped.txt'), 'utf8'), "nobody's, group root\n");
      assert.equal(readFileSync(join(ws, 'theirs.txt'), 'utf8'), "root's\n");
      assert.equal(readFileSync(join(ws, 'shared.txt'), 'utf8'), "root's, anyone may write\n");
    }
    assert.deepEqual(readdirSync(ws).sort(), paths.sort());
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('a file in a folder the writer may not write is refused before the person is asked, saying so', { timeout: 180_000 }, () => {
  // Before: the person was asked, and once they approved the refusal read '"locked/notes.txt":
  // "locked/notes.txt" cannot be used (EACCES): it was changed while it was written' (nothing was).
  const home = tempDir('chatty-write-permissions-');
  const ws = workspace(home);
  const locked = join(ws, 'locked');
  mkdirSync(locked);
  writeFileSync(join(locked, 'notes.txt'), 'notes\n');
  mine(join(locked, 'notes.txt'));
  mine(locked);
  chmodSync(locked, 0o555);
  try {
    const out = planAndWrite(ws, ['locked/notes.txt', 'locked/new/notes.txt']);
    const why = (path: string, step: 'plan' | 'write' | 'replace') =>
      new RegExp(`^${path.replace(/[./]/g, '\\$&')} ${step}: WorkspaceRefusal: "${path.replace(/[./]/g, '\\$&')}" is in a folder this user may not write \\("locked": EACCES\\)`, 'm');
    assert.match(out, why('locked/notes.txt', 'plan'));
    assert.match(out, why('locked/notes.txt', 'write'));
    assert.match(out, why('locked/notes.txt', 'replace'));
    assert.match(out, why('locked/new/notes.txt', 'plan'));
    assert.match(out, why('locked/new/notes.txt', 'write'));
    assert.equal(readFileSync(join(locked, 'notes.txt'), 'utf8'), 'notes\n');
    assert.deepEqual(readdirSync(locked), ['notes.txt']);
  } finally {
    chmodSync(locked, 0o755);
    rmSync(home, { recursive: true, force: true });
  }
});

test("a file in a setgid folder keeps the folder's group without the writer being in it: asked, and written", { timeout: 180_000 }, () => {
  // The new file takes a setgid folder's group, so a file of that group needs no change of group,
  // even from a writer not in it: the early check says so as the write does.
  const home = tempDir('chatty-write-permissions-');
  const ws = workspace(home);
  const team = join(ws, 'team');
  mkdirSync(team);
  writeFileSync(join(team, 'notes.txt'), 'notes\n');
  mine(join(team, 'notes.txt'));
  mine(team);
  const group = ROOT ? 0 : (process.getgroups?.().find((gid) => gid !== process.getegid?.()) ?? process.getegid!());
  chownSync(team, ROOT ? NOBODY : process.getuid!(), group);
  chownSync(join(team, 'notes.txt'), ROOT ? NOBODY : process.getuid!(), group);
  chmodSync(team, 0o2775);
  chmodSync(join(team, 'notes.txt'), 0o664);
  try {
    const out = planAndWrite(ws, ['team/notes.txt']);
    assert.match(out, /^team\/notes\.txt plan: asks \(\+1 -1\)/m);
    assert.match(out, /^team\/notes\.txt write: written/m);
    assert.match(out, /^team\/notes\.txt replace: written/m);
    const { gid, mode } = statSync(join(team, 'notes.txt'));
    assert.deepEqual({ gid, mode: mode & 0o7777 }, { gid: group, mode: 0o664 });
    assert.deepEqual(readdirSync(team), ['notes.txt']);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
