/**
 * tryLock judged a lock stale (lstat: older than LOCK_STALE_MS) and then removed whatever was at
 * the path. Two starters that both judged a crashed holder's lock stale: the first removed it and
 * created its own, then the second's removal, already decided, took the first's fresh lock, and
 * both held it. Now the stale lock is renamed aside (atomic) and removed only if it is still the
 * file judged stale; a fresh lock moved aside by mistake is put back.
 */
import assert from 'node:assert/strict';
import { closeSync, lstatSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { test } from 'node:test';
import { LOCK_STALE_MS, removeStaleLock, tryLock } from '../../main/owner-only/lock-file.js';
import { freshPaths } from '../helpers/owner-only.js';

const fresh = freshPaths('stale-lock');

function staleLock(lock: string): void {
  writeFileSync(lock, 'crashed holder');
  const old = (Date.now() - LOCK_STALE_MS - 60_000) / 1000;
  utimesSync(lock, old, old);
}

test('a lock another taker made after this one judged the old lock stale is not removed', () => {
  const lock = fresh();
  staleLock(lock);
  const judged = lstatSync(lock);
  // Meanwhile the other taker removed the stale lock and created its own (forced order).
  rmSync(lock);
  writeFileSync(lock, 'fresh holder');
  removeStaleLock(lock, judged);
  assert.equal(readFileSync(lock, 'utf8'), 'fresh holder', "the other taker's fresh lock was removed");
  assert.deepEqual(readdirSync(dirname(lock)).filter((name) => name.startsWith(`${lock.split('/').pop()}.`)), [], 'nothing left aside');
});

test('the lock judged stale is removed, and tryLock then takes it', () => {
  const lock = fresh();
  staleLock(lock);
  removeStaleLock(lock, lstatSync(lock));
  assert.throws(() => lstatSync(lock), { code: 'ENOENT' });
  staleLock(lock);
  const taken = tryLock(lock, (message) => new Error(message));
  assert.ok('fd' in taken, 'the stale lock was taken over');
  closeSync(taken.fd);
  assert.equal(readdirSync(dirname(lock)).filter((name) => name.startsWith(`${lock.split('/').pop()}.`)).length, 0, 'nothing left aside');
});
