/**
 * One bounded, non-blocking reader of a regular file (main/owner-only/regular-file.ts), sync and
 * async alike: what the owner-only JSON files read through, and what a worktree's records and the
 * app's pages each read with a copy of their own.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readRegularFile, readRegularFileSync, type RegularFileLimits, type RegularFileRead } from '../../main/owner-only/index.js';
import { freshPaths } from '../helpers/owner-only.js';

const fresh = freshPaths('chatty-regular-file-');

/** Both readers' answers, which must agree. */
async function both(path: string, limits: RegularFileLimits): Promise<RegularFileRead> {
  const sync = readRegularFileSync(path, limits);
  const async = await readRegularFile(path, limits);
  assert.deepEqual(async, sync);
  return sync;
}

const why = (read: RegularFileRead): string => (read.ok ? `ok: ${read.bytes.toString('utf8')}` : read.why);

test('a regular file at most maxBytes is read whole; one over it is refused by its size, never read', async () => {
  const path = fresh();
  writeFileSync(path, 'hello', { mode: 0o600 });
  assert.equal(why(await both(path, { maxBytes: 5 })), 'ok: hello');
  assert.equal(why(await both(path, { maxBytes: 4 })), 'too-large');
  truncateSync(path, 8 * 1024 * 1024 * 1024); // a sparse 8 GiB
  const read = await both(path, { maxBytes: 1024 });
  assert.deepEqual(read, { ok: false, why: 'too-large', message: 'it is over 1024 bytes', size: 8 * 1024 * 1024 * 1024 });
});

test('a fifo is refused without waiting for a writer, a folder too, a missing file is said so', async () => {
  const path = fresh();
  assert.equal(spawnSync('mkfifo', ['-m', '600', path]).status, 0);
  assert.equal(why(await both(path, { maxBytes: 1024 })), 'not-regular');
  const folder = fresh();
  mkdirSync(folder);
  assert.equal(why(await both(folder, { maxBytes: 1024 })), 'not-regular');
  assert.equal(why(await both(join(folder, 'none'), { maxBytes: 1024 })), 'missing');
});

test('a link at the path is refused unless noFollow is false', async () => {
  const target = fresh();
  writeFileSync(target, '{}', { mode: 0o600 });
  const link = fresh();
  symlinkSync(target, link);
  assert.equal(why(await both(link, { maxBytes: 1024 })), 'link');
  assert.equal(why(await both(link, { maxBytes: 1024, noFollow: false })), 'ok: {}');
});
