/**
 * A worker that makes its 32 calls to a long-lived participant and stops reading, while that
 * participant answers each at once with megabytes of opaque metadata: the answers must not pile
 * up in the broker for the caller that does not read them. Real children on real socketpairs
 * (children/deaf-caller.ts, children/fat-answers.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ParticipantConnection } from '../../main/fabric/index.js';
import { OUTBOUND_QUEUE_BYTES } from '../../main/fabric/limits/constants.js';
import { startBroker, until } from './helpers.js';

const DEAF_CALLER = fileURLToPath(new URL('./children/deaf-caller.ts', import.meta.url));
const FAT = fileURLToPath(new URL('./children/fat-answers.ts', import.meta.url));

test("a caller that stops reading with 32 calls to a participant answering each with 4 MiB: the participant is paused, the broker holds one answer, not 32", async () => {
  const t = startBroker([]);
  try {
    const fat = (await t.broker.openParticipant('fat', process.execPath, ['--import', 'tsx', FAT, '4'])).connection as ParticipantConnection;
    const env = { ...process.env, CHATTY_TEST_INVOKE: JSON.stringify({ agent: 'fat-0', prompt: 'go' }), CHATTY_TEST_INVOKE_COUNT: '32' };
    const deaf = await t.broker.openParticipant('deaf', process.execPath, ['--import', 'tsx', DEAF_CALLER], { env });
    const queue = deaf.connection.outbound;
    // Either the participant is held (the fix) or every answer ends up waiting (31: the first went to the stream).
    await until(() => fat.readingPaused || queue.waiters >= 31, 'the participant paused, or every answer waiting');
    assert.ok(fat.readingPaused, `the participant was not paused: ${queue.waiters} answers wait (${(queue.heldBytes / 1024 / 1024).toFixed(0)} MiB)`);
    assert.ok(queue.waiters <= 1, `${queue.waiters} answers wait`);
    assert.ok(queue.heldBytes <= OUTBOUND_QUEUE_BYTES + 4 * 1024 * 1024 + 1024, `the queue holds ${queue.heldBytes} bytes for the deaf caller`);
  } finally {
    // Closing the deaf caller drops its waiting answer: the participant reads on.
    await t.close();
  }
});
