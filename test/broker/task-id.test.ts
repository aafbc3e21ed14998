/**
 * Task ids (main/broker/task-id.ts): `task-` and 128 random bits in hex, unique across the pool's
 * refills, and what the broker sends a participant in its `task.run`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newTaskId } from '../../main/broker/task-id.js';

describe('task ids', () => {
  it('are task- and 32 hex digits, never repeated over several refills of the pool', () => {
    const ids = new Set<string>();
    for (let n = 0; n < 2_000; n++) {
      const id = newTaskId();
      assert.match(id, /^task-[0-9a-f]{32}$/);
      ids.add(id);
    }
    assert.equal(ids.size, 2_000);
  });

  it('differ in every position over many ids (random bits, not a counter)', () => {
    const seen = Array.from({ length: 32 }, () => new Set<string>());
    for (let n = 0; n < 400; n++) [...newTaskId().slice(5)].forEach((digit, at) => seen[at]!.add(digit));
    for (const [at, digits] of seen.entries()) assert.ok(digits.size >= 8, `hex digit ${at} took only ${digits.size} values`);
  });
});
