/**
 * A long-lived participant that never ends the tasks it is given, not even once they are
 * cancelled, and keeps sending text into them: once the broker has ended such a task itself
 * (`canceled` after the grace), nothing of it is kept. Real children (children/deaf-to-cancel.ts)
 * on real socketpairs; the heap and array buffers measured after a full garbage collection.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { heldAfterGc } from '../fabric/held-after-gc.js';
import { startBroker } from './helpers.js';

const DEAF = fileURLToPath(new URL('./children/deaf-to-cancel.ts', import.meta.url));

test('a participant that never ends its cancelled tasks and streams into them: the broker keeps nothing of a task it ended itself', async () => {
  const t = startBroker([], { cancelGraceMs: 300 });
  try {
    await t.broker.openParticipant('deaf', process.execPath, ['--import', 'tsx', DEAF]);
    /** One call, cancelled once its first 1 MiB has come; resolves when the broker has ended it. */
    const cancelledCall = async (): Promise<void> => {
      const abort = new AbortController();
      let texts = 0;
      const result = await t.root.invoke('deaf-0', 'go', {
        signal: abort.signal,
        onProgress: (event) => {
          if ('Text' in event && ++texts === 16) abort.abort();
        },
      });
      assert.equal(result.cancelled_by_user, true);
      assert.match(result.error ?? '', /did not end its task/);
    };
    await cancelledCall(); // warms up
    const before = heldAfterGc();
    for (let round = 0; round < 3; round++) await Promise.all(Array.from({ length: 4 }, cancelledCall));
    // The participant's 1 MiB after each cancel is read (its connection lives on) and must land nowhere.
    await t.root.invoke('deaf-0', 'go', { signal: AbortSignal.timeout(200) });
    const grown = heldAfterGc() - before;
    // Kept, each of the 13 tasks held its text (2 MiB and more each: 26 MiB and more).
    assert.ok(grown < 6 * 1024 * 1024, `the broker grew by ${(grown / 1024 / 1024).toFixed(1)} MiB for tasks it had ended`);
  } finally {
    await t.close();
  }
});
