import { randomFillSync } from 'node:crypto';

/**
 * A new task id: `task-` and 128 random bits in hex, from the system's CSPRNG. Unique without
 * coordination and telling nobody anything about other tasks' ids, as a random UUID would (the
 * broker used `randomUUID`); taken from a pool filled 256 ids at a time and written with one native
 * hex conversion, because `randomUUID`'s own JavaScript (its pool, then 16 table look-ups joined
 * into a string that JSON.stringify then has to flatten) was warmed up only by the broker's calls
 * and cost a few µs a call for the first thousands (docs/benchmarks.md, issue 21, fifth attempt).
 */
export function newTaskId(): string {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const id = `task-${pool.toString('hex', used, used + ID_BYTES)}`;
  used += ID_BYTES;
  return id;
}

const ID_BYTES = 16;
const pool = Buffer.alloc(ID_BYTES * 256);
let used = pool.length;
