/**
 * The key that seals the names of writes' hidden files (temporary-name.ts) is used only when it is
 * this user's regular file, for nobody else, of 32 bytes: a key open to others (anyone who read it
 * could seal names the sweep then removes), another user's (root reading a key planted by one), a
 * symbolic link (to a key of the user's, elsewhere), a key of another size are each refused, left as
 * they are, and the write goes on with a name not sealed (never removed by a later write). Real
 * processes, each with a state folder of its own.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, chownSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers.js';

const TEMPORARY_NAME = fileURLToPath(new URL('../../main/agents/scripted/temporary-name.ts', import.meta.url));
const WRITE_FILE = fileURLToPath(new URL('../../main/agents/scripted/write-file.ts', import.meta.url));
const WORKSPACE_PIN = fileURLToPath(new URL('../../main/agents/scripted/workspace-pin.ts', import.meta.url));
const ROOT = process.getuid?.() === 0;
const NOBODY = 65534;

const UNSEALED = /^\.notes\.txt\.chatty-write-[0-9a-f]{12}$/;
const SEALED = /^(\.notes\.txt\.chatty-write-[0-9a-f]{12}\.\d+\.\d+\.[0-9a-f]{16}\.\d+\.\d+)\.([0-9a-f]{16})$/;

/** The name a fresh process gives the hidden file of a write of notes.txt with `state` as XDG_STATE_HOME, after one write of its own in `ws`. */
function nameMade(state: string, ws: string): string {
  const script = `
    const { temporaryName } = await import(${JSON.stringify(TEMPORARY_NAME)});
    const { commitWrite } = await import(${JSON.stringify(WRITE_FILE)});
    const { pinWorkspace } = await import(${JSON.stringify(WORKSPACE_PIN)});
    await pinWorkspace(${JSON.stringify(ws)});
    await commitWrite(${JSON.stringify(ws)}, { path: 'a.txt', file: ${JSON.stringify(join(ws, 'a.txt'))}, content: 'a\\n', diffStat: '+1 -0' });
    console.log(temporaryName('notes.txt'));`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, XDG_STATE_HOME: state }, timeout: 60_000 });
  assert.equal(child.status, 0, child.stderr);
  assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'a\n', 'the write went on');
  return child.stdout.trim();
}

/** Writes `bytes` to `file` with exactly `mode`, whatever the umask. */
function keyFile(file: string, bytes: Buffer, mode: number): void {
  writeFileSync(file, bytes, { mode: 0o600 });
  chmodSync(file, mode);
}

/** What a path is, not followed: its type, mode, owner and, for a file, its bytes; for a link, where it leads. */
function described(path: string): string {
  const st = lstatSync(path);
  const what = st.isSymbolicLink() ? `link to ${readlinkSync(path)}` : `file ${readFileSync(path).toString('hex')}`;
  return `${what} mode ${(st.mode & 0o7777).toString(8)} uid ${st.uid}`;
}

test("the write key is used when it is this user's own 32 bytes, for nobody else", { timeout: 120_000 }, () => {
  const home = tempDir('chatty-write-key-');
  const ws = join(home, 'ws');
  const state = join(home, 'state');
  mkdirSync(ws);
  mkdirSync(join(state, 'chatty'), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  keyFile(join(state, 'chatty', 'write-key'), key, 0o600);
  try {
    const m = SEALED.exec(nameMade(state, ws));
    assert.ok(m, 'a sealed name');
    // Sealed with this very key.
    assert.equal(m[2], createHmac('sha256', key).update(m[1]!).digest('hex').slice(0, 16));
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test("a write key open to others, another user's, a link, or not 32 bytes is refused and left as it is; names are not sealed", { timeout: 180_000 }, () => {
  const cases: Array<[string, (file: string, home: string) => void]> = [
    ['open to the group', (file) => keyFile(file, randomBytes(32), 0o640)],
    ['open to others', (file) => keyFile(file, randomBytes(32), 0o604)],
    [
      'a link to a key of the user\'s, elsewhere',
      (file, home) => {
        keyFile(join(home, 'elsewhere'), randomBytes(32), 0o600);
        symlinkSync(join(home, 'elsewhere'), file);
      },
    ],
    ['of 31 bytes', (file) => keyFile(file, randomBytes(31), 0o600)],
    ['of 33 bytes', (file) => keyFile(file, randomBytes(33), 0o600)],
  ];
  // Another user's key can only be made as root (and root, who may read it, is the one it could fool).
  if (ROOT) {
    cases.push([
      "another user's",
      (file) => {
        keyFile(file, randomBytes(32), 0o600);
        chownSync(file, NOBODY, NOBODY);
      },
    ]);
  }
  for (const [what, plant] of cases) {
    const home = tempDir('chatty-write-key-refused-');
    const ws = join(home, 'ws');
    const state = join(home, 'state');
    const file = join(state, 'chatty', 'write-key');
    mkdirSync(ws);
    mkdirSync(join(state, 'chatty'), { recursive: true, mode: 0o700 });
    try {
      plant(file, home);
      const before = described(file);
      assert.match(nameMade(state, ws), UNSEALED, `a key ${what}`);
      assert.equal(described(file), before, `a key ${what}: left as it was`);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }
});
