/**
 * A worker that makes its 32 calls to a long-lived participant and stops reading, while that
 * participant answers each at once with megabytes of opaque metadata: the answers must not pile
 * up in the broker for the caller that does not read them. Real children on real socketpairs
 * (children/deaf-caller.ts, children/fat-answers.ts).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

const BATCH = fileURLToPath(new URL('./children/batch-outcomes.ts', import.meta.url));
const READS_THEN_DEAF = fileURLToPath(new URL('./children/reads-then-deaf.ts', import.meta.url));

test("a caller that reads its 31 calls' progress and then stops, while their callee sends every outcome in one read: the callee is paused after the first answer that waits, not after the chunk", async () => {
  const t = startBroker([]);
  const dir = mkdtempSync(join(tmpdir(), 'chatty-batch-'));
  const marker = join(dir, 'deaf');
  try {
    const KIB = 512;
    const batch = (await t.broker.openParticipant('batch', process.execPath, ['--import', 'tsx', BATCH, String(KIB), '32'])).connection as ParticipantConnection;
    const env = { ...process.env, CHATTY_TEST_INVOKE: JSON.stringify({ agent: 'batch-0', prompt: 'go' }) };
    const deaf = await t.broker.openParticipant('deaf', process.execPath, ['--import', 'tsx', READS_THEN_DEAF, '31', String(31 * (KIB / 64)), marker], { env });
    const queue = deaf.connection.outbound;
    // 31 calls streamed, then a 32nd (the most in flight) that makes the callee answer all at once.
    // Once the caller has read every progress line, what waits for it is answers; a chunk is acted
    // on in one turn, so the first look at a waiting answer sees every answer that chunk made.
    await until(() => existsSync(marker), 'the caller read all progress and stopped');
    await until(() => queue.waiters > 0, 'an answer waiting for the deaf caller');
    assert.equal(batch.readingPaused, true, 'the participant is paused');
    assert.equal(queue.waiters, 1, `${queue.waiters} answers wait (${(queue.heldBytes / 1024 / 1024).toFixed(0)} MiB)`);
    assert.ok(queue.heldBytes <= OUTBOUND_QUEUE_BYTES + KIB * 1024 + 64 * 1024, `the queue holds ${queue.heldBytes} bytes for the deaf caller`);
  } finally {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

const EXIT_OWING = fileURLToPath(new URL('./children/exit-owing.ts', import.meta.url));

test("a caller that reads its 31 calls' progress and then stops, while their callee exits owing them all: one answer waits, not one per task", async () => {
  const t = startBroker([]);
  const dir = mkdtempSync(join(tmpdir(), 'chatty-exit-owing-'));
  const marker = join(dir, 'deaf');
  try {
    const KIB = 512;
    const leaver = (await t.broker.openParticipant('leaver', process.execPath, ['--import', 'tsx', EXIT_OWING, String(KIB), '32'])).connection as ParticipantConnection;
    const env = { ...process.env, CHATTY_TEST_INVOKE: JSON.stringify({ agent: 'leaver-0', prompt: 'go' }) };
    const deaf = await t.broker.openParticipant('deaf', process.execPath, ['--import', 'tsx', READS_THEN_DEAF, '31', String(31 * (KIB / 64)), marker], { env });
    const queue = deaf.connection.outbound;
    // 31 calls streamed, then a 32nd that makes the callee exit: the broker ends all 32 tasks at once,
    // each answer carrying its task's kept text (512 KiB), to a caller that reads no more.
    await until(() => existsSync(marker), 'the caller read all progress and stopped');
    await until(() => !leaver.isOpen, "the callee's connection closed");
    await until(() => queue.waiters > 0, 'an answer waiting for the deaf caller');
    // Before: close() handed every task its outcome in one loop, so every answer was made: 25 waited (15 MiB).
    assert.equal(queue.waiters, 1, `${queue.waiters} answers wait (${(queue.heldBytes / 1024 / 1024).toFixed(0)} MiB)`);
    assert.ok(queue.heldBytes <= OUTBOUND_QUEUE_BYTES + KIB * 1024 + 64 * 1024, `the queue holds ${queue.heldBytes} bytes for the deaf caller`);
  } finally {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

const FAT_CARD = fileURLToPath(new URL('./children/fat-card.ts', import.meta.url));

test("a caller that stops reading with 32 agent.list calls in one write, while a participant's card is 4 MiB: one answer waits, not 31", async () => {
  const t = startBroker([]);
  try {
    await t.broker.openParticipant('fat', process.execPath, ['--import', 'tsx', FAT_CARD, '4']);
    const env: NodeJS.ProcessEnv = { ...process.env, CHATTY_TEST_METHOD: 'agent.list', CHATTY_TEST_INVOKE_COUNT: '32' };
    delete env['CHATTY_TEST_INVOKE'];
    const deaf = await t.broker.openParticipant('deaf', process.execPath, ['--import', 'tsx', DEAF_CALLER], { env });
    const queue = deaf.connection.outbound;
    // Each answer copies the 4 MiB card; the first goes to the stream, the next waits for room.
    // Either the caller's reading is paused at that answer (the fix) or all 31 end up waiting.
    await until(() => deaf.connection.readingPaused || queue.waiters >= 31, "the caller's reading paused, or every answer waiting");
    // Before: the 32 calls of the one read were all run before any answer was made (agent.list was
    // answered a promise turn later), so 31 answers of 4 MiB each waited: 124 MiB for one caller.
    assert.equal(queue.waiters, 1, `${queue.waiters} answers wait (${(queue.heldBytes / 1024 / 1024).toFixed(0)} MiB)`);
    assert.ok(queue.heldBytes <= 4 * 1024 * 1024 + 64 * 1024, `the queue holds ${queue.heldBytes} bytes for the deaf caller`);
  } finally {
    await t.close();
  }
});
