/**
 * Calls to a long-lived participant that has stopped reading: each call's task.run (its prompt, up
 * to a frame) waits for room in that participant's outbound queue. What the broker holds for them
 * must stay bounded: a worker making calls is paused at the first task.run that waits, and a
 * cancelled call's task.run that never went out is withdrawn. Real children on real socketpairs
 * (children/deaf-participant.ts, children/deaf-caller.ts).
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

const SLEEPY = fileURLToPath(new URL('./children/deaf-participant.ts', import.meta.url));
const DEAF_CALLER = fileURLToPath(new URL('./children/deaf-caller.ts', import.meta.url));
const MIB = 1024 * 1024;

test("a worker's 32 calls with 1 MiB prompts to a participant that stopped reading: the caller is paused at the first task.run that waits, not 28 of them held", async () => {
  const t = startBroker([]);
  try {
    const sleepy = (await t.broker.openParticipant('sleepy', process.execPath, ['--import', 'tsx', SLEEPY])).connection as ParticipantConnection;
    const env = { ...process.env, CHATTY_TEST_INVOKE: JSON.stringify({ agent: 'sleepy-0', prompt: '' }), CHATTY_TEST_INVOKE_PROMPT_BYTES: String(MIB), CHATTY_TEST_INVOKE_COUNT: '32' };
    const caller = (await t.broker.openParticipant('deaf', process.execPath, ['--import', 'tsx', DEAF_CALLER], { env })).connection as ParticipantConnection;
    const queue = sleepy.outbound;
    // Either the caller is held (the fix) or most of its task.runs end up waiting.
    await until(() => caller.readingPaused || queue.waiters >= 20, 'the caller paused, or its task.runs waiting');
    assert.ok(caller.readingPaused, `the caller was not paused: ${queue.waiters} task.runs wait (${(queue.heldBytes / MIB).toFixed(0)} MiB)`);
    assert.equal(queue.waiters, 1, `${queue.waiters} task.runs wait`);
    assert.ok(queue.heldBytes <= OUTBOUND_QUEUE_BYTES + 2 * MIB, `the queue holds ${(queue.heldBytes / MIB).toFixed(1)} MiB for the deaf participant`);
  } finally {
    await t.close();
  }
});

test("cancelled calls whose task.runs wait for a participant that stopped reading: each is withdrawn at once, nothing of it kept", async () => {
  const t = startBroker([], { cancelGraceMs: 200 });
  try {
    const sleepy = (await t.broker.openParticipant('sleepy', process.execPath, ['--import', 'tsx', SLEEPY])).connection as ParticipantConnection;
    const queue = sleepy.outbound;
    const controllers = Array.from({ length: 12 }, () => new AbortController());
    const calls = controllers.map((controller) => t.root.invoke('sleepy-0', 'p'.repeat(MIB), { signal: controller.signal }));
    await until(() => queue.waiters >= 6, 'task.runs waiting for room');
    const waiting = queue.waiters;
    for (const controller of controllers) controller.abort();
    const results = await Promise.all(calls);
    for (const result of results) {
      assert.equal(result.success, false);
      assert.equal(result.cancelled_by_user, true);
    }
    const withdrawn = results.filter((r) => /before sleepy-0 was sent the task/.test(r.error ?? '')).length;
    assert.equal(withdrawn, waiting, `${withdrawn} of the ${waiting} waiting task.runs withdrawn: ${results.map((r) => r.error).join(' | ')}`);
    // What still waits is a req.cancel (a few bytes) for each task.run that was out before the abort.
    assert.equal(queue.waiters, results.length - withdrawn, `${queue.waiters} frames wait for room`);
    assert.ok(queue.heldBytes <= OUTBOUND_QUEUE_BYTES + 64 * 1024, `the queue holds ${(queue.heldBytes / MIB).toFixed(1)} MiB for ended calls`);
  } finally {
    await t.close();
  }
});

const ASKER = fileURLToPath(new URL('./children/withdrawing-asker.ts', import.meta.url));

test('questions of 1 MiB relayed to a caller that stopped reading, each withdrawn by its asker: the relayed lines go with them, not one kept per question', async () => {
  const t = startBroker([]);
  const dir = mkdtempSync(join(tmpdir(), 'chatty-asker-'));
  const marker = join(dir, 'done');
  try {
    await t.broker.openParticipant('asker', process.execPath, ['--import', 'tsx', ASKER, '12', marker]);
    const env = { ...process.env, CHATTY_TEST_INVOKE: JSON.stringify({ agent: 'asker-0', prompt: 'go' }) };
    const caller = (await t.broker.openParticipant('deaf', process.execPath, ['--import', 'tsx', DEAF_CALLER], { env })).connection as ParticipantConnection;
    await until(() => existsSync(marker), 'the asker asked and withdrew its 12 questions');
    const queue = caller.outbound;
    // Each question relayed to the deaf caller waits in its queue; withdrawn, it must not stay there.
    assert.ok(queue.heldBytes <= OUTBOUND_QUEUE_BYTES + 64 * 1024, `the deaf caller's queue holds ${(queue.heldBytes / MIB).toFixed(1)} MiB (${queue.waiters} waiting) for withdrawn questions`);
  } finally {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
