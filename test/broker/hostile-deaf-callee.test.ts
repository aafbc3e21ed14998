/**
 * Calls to a long-lived participant that has stopped reading: each call's task.run (its prompt, up
 * to a frame) waits for room in that participant's outbound queue. What the broker holds for them
 * must stay bounded: one task.run waits for a callee's room, whoever the caller (a later call is
 * refused at once, its caller reading on), and a cancelled call's task.run that never went out is
 * withdrawn. Real children on real socketpairs (children/deaf-participant.ts,
 * children/cancelling-caller.ts, children/deaf-caller.ts).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ParticipantConnection } from '../../main/fabric/index.js';
import { OUTBOUND_QUEUE_BYTES } from '../../main/fabric/limits/constants.js';
import { plan, startBroker, until } from './helpers.js';

const SLEEPY = fileURLToPath(new URL('./children/deaf-participant.ts', import.meta.url));
const DEAF_CALLER = fileURLToPath(new URL('./children/deaf-caller.ts', import.meta.url));
const MIB = 1024 * 1024;

const CANCELLER = fileURLToPath(new URL('./children/cancelling-caller.ts', import.meta.url));
/** The refusal of a call while a task.run already waits for sleepy-0's room. */
const NOT_READING = /^refused: sleepy-0 is not reading: a task\.run already waits for room in its queue/;

test("a worker's 32 calls with 1 MiB prompts to a participant that stopped reading: one task.run waits, the rest are refused at once, and the worker reads on (its req.cancel too)", async () => {
  const t = startBroker([], { cancelGraceMs: 200 });
  const dir = mkdtempSync(join(tmpdir(), 'chatty-canceller-'));
  const go = join(dir, 'go');
  const answered = join(dir, 'answered');
  const answers = (): string[] => (existsSync(answered) ? readFileSync(answered, 'utf8').split('\n') : []);
  try {
    const sleepy = (await t.broker.openParticipant('sleepy', process.execPath, ['--import', 'tsx', SLEEPY])).connection as ParticipantConnection;
    const caller = (await t.broker.openParticipant('canceller', process.execPath, ['--import', 'tsx', CANCELLER, go, answered])).connection as ParticipantConnection;
    const queue = sleepy.outbound;
    await until(() => queue.waiters >= 1, "a task.run waiting for sleepy-0's room");
    assert.equal(queue.waiters, 1, `${queue.waiters} task.runs wait`);
    assert.ok(queue.heldBytes <= OUTBOUND_QUEUE_BYTES + 2 * MIB, `the queue holds ${(queue.heldBytes / MIB).toFixed(1)} MiB for the deaf participant`);
    writeFileSync(go, '');
    // Every call is answered: refused at once, withdrawn, or cancelled after the 200 ms grace.
    // Before, the caller's reading was held behind the waiting task.run, its req.cancel never read.
    await until(() => answers().length === 32, `the canceller's 32 calls answered (caller reading paused: ${caller.readingPaused})`).catch(() => {});
    const got = answers();
    assert.equal(got.length, 32, `${got.length} of 32 cancelled calls answered; caller reading paused: ${caller.readingPaused}, task.runs waiting: ${queue.waiters}`);
    const refused = got.filter((a) => NOT_READING.test(a)).length;
    const withdrawn = got.filter((a) => a === 'cancelled before sleepy-0 was sent the task').length;
    const cancelled = got.filter((a) => a === 'cancelled: sleepy-0 did not end its task within 200 ms').length;
    assert.equal(withdrawn, 1, got.join(' | '));
    assert.ok(refused > 0 && refused + withdrawn + cancelled === 32, got.join(' | '));
    assert.equal(caller.readingPaused, false);
    assert.ok(queue.heldBytes <= OUTBOUND_QUEUE_BYTES + 64 * 1024, `the queue holds ${(queue.heldBytes / MIB).toFixed(1)} MiB for ended calls`);
  } finally {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('helpers of one tree calling a participant that stopped reading add no task.run to what waits for it: one waits, whoever the caller', async () => {
  const t = startBroker(['helper', 'coder'], { cancelGraceMs: 200 });
  const controller = new AbortController();
  try {
    const sleepy = (await t.broker.openParticipant('sleepy', process.execPath, ['--import', 'tsx', SLEEPY])).connection as ParticipantConnection;
    const queue = sleepy.outbound;
    // First fill the deaf participant's queue (and its socket buffers) from the root.
    const fillers = Promise.allSettled(Array.from({ length: 8 }, () => t.root.invoke('sleepy-0', 'f'.repeat(MIB), { signal: controller.signal })));
    await until(() => queue.waiters >= 1, 'the deaf queue full');
    const waitingBefore = queue.waiters;
    const heldBefore = queue.heldBytes;
    const big = { echo: 'p'.repeat(MIB) };
    const helpers = 6;
    let done = false;
    const call = t.root.invoke('helper', plan({ parallel: Array.from({ length: helpers }, () => ({ delegate: { to: 'coder', prompt: { delegate: { to: 'sleepy-0', prompt: big } } } })) }), { signal: controller.signal });
    void call.finally(() => (done = true)).catch(() => {});
    await until(() => done || queue.waiters >= waitingBefore + helpers, "the helpers' calls answered, or their task.runs waiting");
    // Before, each helper's call left its own task.run waiting (6 of them, 6 MiB; 33 MiB each at the frame cap).
    assert.equal(queue.waiters - waitingBefore, 0, `the helpers' calls added ${queue.waiters - waitingBefore} waiting task.runs, ${((queue.heldBytes - heldBefore) / MIB).toFixed(1)} MiB`);
    assert.equal(queue.heldBytes, heldBefore);
    assert.equal((await call).success, false);
    // The root's own calls are bounded the same way: the fillers beyond the one waiting were refused.
    controller.abort();
    const filled = await fillers;
    const refused = filled.filter((f) => f.status === 'rejected' && NOT_READING.test((f.reason as Error).message)).length;
    assert.ok(refused > 0, filled.map((f) => (f.status === 'rejected' ? (f.reason as Error).message : f.value.error)).join(' | '));
  } finally {
    await t.close();
  }
});

test("cancelled calls whose task.runs wait for a participant that stopped reading: each is withdrawn at once, nothing of it kept, however often called again", async () => {
  const t = startBroker([], { cancelGraceMs: 200 });
  try {
    const sleepy = (await t.broker.openParticipant('sleepy', process.execPath, ['--import', 'tsx', SLEEPY])).connection as ParticipantConnection;
    const queue = sleepy.outbound;
    const controllers = Array.from({ length: 12 }, () => new AbortController());
    // Settled as they come: the refused ones reject while the first still waits.
    const calls = Promise.allSettled(controllers.map((controller) => t.root.invoke('sleepy-0', 'p'.repeat(MIB), { signal: controller.signal })));
    await until(() => queue.waiters >= 1, 'a task.run waiting for room');
    for (const controller of controllers) controller.abort();
    const settled = await calls;
    const results = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const refusals = settled.flatMap((s) => (s.status === 'rejected' ? [(s.reason as Error).message] : []));
    // One task.run waited; the calls after it were refused at once, naming the callee.
    for (const message of refusals) assert.match(message, NOT_READING);
    for (const result of results) {
      assert.equal(result.success, false);
      assert.equal(result.cancelled_by_user, true);
    }
    const withdrawn = results.filter((r) => /before sleepy-0 was sent the task/.test(r.error ?? '')).length;
    assert.equal(withdrawn, 1, `${withdrawn} waiting task.runs withdrawn: ${results.map((r) => r.error).join(' | ')}`);
    // Cancel and call again: each new task.run waits alone and is withdrawn, so nothing piles up.
    const cancels = queue.waiters;
    for (let i = 0; i < 5; i++) {
      const controller = new AbortController();
      const call = t.root.invoke('sleepy-0', 'p'.repeat(MIB), { signal: controller.signal });
      await until(() => queue.waiters === cancels + 1, 'the new task.run waiting');
      controller.abort();
      assert.equal((await call).error, 'cancelled before sleepy-0 was sent the task');
    }
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

test("8 helpers each asking 1 MiB of questions of the caller that called them and stopped reading: one relayed question waits for its room, the rest are refused at once", async () => {
  const t = startBroker(['helper']);
  const dir = mkdtempSync(join(tmpdir(), 'chatty-askers-'));
  try {
    const questions = Array.from({ length: 64 }, (_, i) => ({ id: `q${i}`, question: 'q'.repeat(16 * 1024) }));
    const invoke = join(dir, 'invoke.json');
    writeFileSync(invoke, JSON.stringify({ agent: 'helper', prompt: plan({ ask: questions }) }));
    const env = { ...process.env, CHATTY_TEST_INVOKE_FILE: invoke, CHATTY_TEST_INVOKE_COUNT: '8' };
    const caller = (await t.broker.openParticipant('deaf', process.execPath, ['--import', 'tsx', DEAF_CALLER], { env })).connection as ParticipantConnection;
    const queue = caller.outbound;
    const bound = OUTBOUND_QUEUE_BYTES + MIB + 64 * 1024;
    // Each helper's question climbs to the deaf caller first: the first few fit its queue and stream
    // (4 MiB: at most 4 of them), and their askers wait for answers; then one waits for room, and
    // every later one is refused, so its helper ends. Either that, or the questions pile up.
    await until(() => queue.heldBytes > bound || (t.pids().length === 8 && t.alive().length <= 5), 'the questions piling up, or 3 helpers refused and ended');
    // Before: 4 questions of 1 MiB waited behind the 4 MiB the queue and stream held, one per asker.
    assert.ok(queue.heldBytes <= bound, `the deaf caller's queue holds ${(queue.heldBytes / MIB).toFixed(1)} MiB (${queue.waiters} waiting)`);
  } finally {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
