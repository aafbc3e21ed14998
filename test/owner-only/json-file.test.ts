/**
 * `OwnerOnlyJsonFile` (the approval rules and the plugin grants): what is planted at its path
 * and how it notices a change.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { statSync, utimesSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { z } from 'zod';
import { OwnerOnlyJsonFile } from '../../main/owner-only/index.js';
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
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 15_000 });
  assert.equal(child.signal, null, `the read returned (it was killed by ${child.signal}: blocked on the fifo)`);
  assert.match(child.stdout, /refused: test file .* is not a regular file/, child.stderr);
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
