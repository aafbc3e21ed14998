/**
 * `OwnerOnlyJsonFile` (the approval rules and the plugin grants): what is planted at its path
 * and how it notices a change.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import { MAX_JSON_FILE_BYTES, OwnerOnlyJsonFile } from '../../main/owner-only/index.js';
import { freshPaths } from '../helpers/owner-only.js';

const fresh = freshPaths('chatty-json-file-');
const Shape = z.object({ n: z.number() });
const open = (path: string): OwnerOnlyJsonFile<z.infer<typeof Shape>> =>
  new OwnerOnlyJsonFile(path, { label: 'test file', contents: 'numbers', kind: 'a test file', schema: Shape, refuse: (m) => new Error(m) });

test('a fifo planted at the path is refused at once, not read (the read held the main thread until someone wrote to it)', () => {
  const path = fresh();
  assert.equal(spawnSync('mkfifo', ['-m', '600', path]).status, 0);
  // In a child: before, the read blocked its thread for ever, and nothing in-process can end that.
  const script = `
    import { OwnerOnlyJsonFile } from ${JSON.stringify(new URL('../../main/owner-only/index.ts', import.meta.url).href)};
    const file = new OwnerOnlyJsonFile(${JSON.stringify(path)}, { label: 'test file', contents: 'numbers', kind: 'a test file', schema: { safeParse: (d) => ({ success: true, data: d }) }, refuse: (m) => new Error(m) });
    try { file.read(); console.log('read'); } catch (err) { console.log('refused:', err.message); }`;
  // A hang guard: the old read blocked for ever; 60 s leaves a loaded machine time to start tsx.
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(child.signal, null, `the read returned (it was killed by ${child.signal}: blocked on the fifo)`);
  assert.match(child.stdout, /refused: test file .* is not a regular file/, child.stderr);
});

test('a file over MAX_JSON_FILE_BYTES is refused by its size, never read (a sparse file of gigabytes was read whole on the main thread)', () => {
  const path = fresh();
  writeFileSync(path, '{"n":1}', { mode: 0o600 });
  truncateSync(path, 8 * 1024 * 1024 * 1024); // 8 GiB, sparse: nothing on disk
  assert.throws(() => open(path).read(), (err: Error) => err.message.includes(`test file ${path} is over ${MAX_JSON_FILE_BYTES} bytes; it was left as it is`));
  truncateSync(path, MAX_JSON_FILE_BYTES); // at the cap: read (and refused as JSON, NULs after the object)
  assert.throws(() => open(path).read(), /is not valid JSON/);
});

test('an in-place edit of the same size that keeps the modification time is seen (its ctime changed)', () => {
  const path = fresh();
  const then = 1_700_000_000; // a whole second, which utimes sets exactly
  writeFileSync(path, '{"n":1}\n', { mode: 0o600 });
  utimesSync(path, then, then);
  const file = open(path);
  assert.deepEqual(file.read(), { n: 1 });
  const before = statSync(path);
  writeFileSync(path, '{"n":2}\n', { flag: 'r+' }); // same inode, same size
  utimesSync(path, then, then); // rsync -t, cp -p, touch -r: the old mtime put back
  assert.equal(statSync(path).mtimeMs, before.mtimeMs);
  assert.equal(statSync(path).ino, before.ino);
  assert.deepEqual(file.read(), { n: 2 });
});

/**
 * Who may have written the file, the one owner-only rule (`whyOpenToOthers`) applied to it and to
 * its folder: pinned so that folding the rule into one place changed nothing a person sees.
 */
test('a file others could have written is refused, naming why; one in a sticky shared folder or a closed folder of its own is read', () => {
  const refused = (path: string): string | undefined => {
    try {
      open(path).read();
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  };
  const inFolder = (mode: number, fileMode = 0o600, owner?: number): string => {
    const dir = fresh();
    mkdirSync(dir);
    const path = join(dir, 'file.json');
    writeFileSync(path, '{"n":1}\n');
    chmodSync(path, fileMode);
    chmodSync(dir, mode);
    if (owner !== undefined) chownSync(dir, owner, owner);
    return path;
  };
  const groupWritable = inFolder(0o700, 0o664);
  assert.match(refused(groupWritable) ?? '', /^test file \S+ is writable by its group \(mode 664\): someone else could have written its numbers; it was left as it is/);
  assert.match(refused(inFolder(0o700, 0o602)) ?? '', /is writable by others \(mode 602\)/);
  const sharedFolder = inFolder(0o777);
  assert.match(refused(sharedFolder) ?? '', new RegExp(`is in a folder others may write \\(${dirname(sharedFolder)}\\)`));
  assert.match(refused(inFolder(0o770)) ?? '', /is in a folder others may write/);
  assert.equal(refused(inFolder(0o1777)), undefined, 'a sticky folder (/tmp): nobody can rename over what is not theirs');
  const readable = inFolder(0o755, 0o644);
  assert.equal(refused(readable), undefined);
  assert.equal(statSync(readable).mode & 0o777, 0o600, 'one others may only read is made owner-only');
  if (process.getuid?.() === 0) {
    // A folder another user owns is one they may write (rename another file over this one): as OpenSSH's StrictModes asks.
    assert.match(refused(inFolder(0o755, 0o600, 4242)) ?? '', /is in a folder others may write/, 'a closed folder of another user (as root: a folder chowned to another user)');
    const theirs = inFolder(0o700, 0o600);
    chownSync(theirs, 4242, 4242);
    assert.match(refused(theirs) ?? '', /is owned by another user \(uid 4242\)/);
  }
});
