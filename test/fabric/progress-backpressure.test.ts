/**
 * Progress to a caller that stops reading (issue 17 item 2), at the connection: what the outbound
 * queue holds is counted (`heldBytes`), a progress frame waiting for room is withdrawn when its
 * call is cancelled, and a task event listener's promise holds the connection's reading. Real
 * children: the puppet worker on a real socketpair.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OUTBOUND_QUEUE_BYTES, OUTBOUND_QUEUE_FRAMES, type CallHandler, type ProgressEvent } from '../../main/fabric/index.js';
import type { TaskEventParams } from '../../main/fabric/wire/worker-to-broker.js';
import { puppetOpener } from './helpers.js';

const puppet = puppetOpener();

describe('progress and the outbound queue', () => {
  it("heldBytes counts what waits for a reader that stopped; a waiting progress frame is withdrawn when its call is cancelled", async () => {
    const step = 'y'.repeat(64 * 1024);
    const count = 200;
    let flooded!: (sent: (Promise<void> | undefined)[]) => void;
    const flood = new Promise<(Promise<void> | undefined)[]>((resolve) => (flooded = resolve));
    const calls: CallHandler = async (_call, context) => {
      // Outside the read of the call's own chunk, so the connection still reads (the req.cancel below).
      await new Promise((resolve) => setImmediate(resolve));
      flooded(Array.from({ length: count }, () => context.progress({ Step: step } satisfies ProgressEvent)));
      await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
      return [];
    };
    const p = await puppet({ calls });
    p.command({ pause: true });
    await p.next((m) => m.paused === true);
    p.send({ v: 3, id: 2, method: 'agent.list' });
    const sent = await flood;
    const queue = p.connection.outbound;
    assert.ok(queue.length < OUTBOUND_QUEUE_FRAMES && queue.length * step.length <= OUTBOUND_QUEUE_BYTES, 'full by its byte cap');
    assert.equal(sent.filter((s) => s !== undefined).length, queue.waiters, 'a promise only for the frames that wait');
    assert.ok(queue.waiters > 0);
    const frame = Buffer.byteLength(JSON.stringify({ v: 3, method: 'req.progress', params: { id: 2, event: { Step: step } } })) + 1;
    assert.equal(queue.heldBytes, (queue.length + queue.waiters) * frame, 'every frame queued or waiting is counted, newline included');
    const waiting = queue.waiters;

    p.send({ v: 3, method: 'req.cancel', params: { id: 2 } });
    await Promise.all(sent); // the waiting ones are withdrawn: none is left hanging
    // What may wait now is the call's answer (the handler returns once cancelled), nothing else;
    // being small, it may also have found room in the bytes the queue has left.
    const answer = Buffer.byteLength(JSON.stringify({ v: 3, id: 2, result: [] })) + 1;
    assert.ok(queue.waiters <= 1, `${queue.waiters} waiting`);
    const progressHeld = queue.heldBytes - queue.waiters * answer;
    assert.ok(
      progressHeld === queue.length * frame || progressHeld === (queue.length - 1) * frame + answer,
      `the withdrawn frames are no longer held: ${queue.heldBytes} bytes for ${queue.length} queued, ${queue.waiters} waiting`,
    );

    p.command({ resume: true });
    assert.deepEqual((await p.answer(2)).result, []);
    const progress = p.reports.filter((m) => (m.got as { method?: string } | undefined)?.method === 'req.progress');
    assert.equal(progress.length, count - waiting, 'the withdrawn frames were never written');
    assert.equal(queue.heldBytes, 0);
  });

  it("a task event listener's promise holds the connection's reading until it settles", async () => {
    const calls: string[] = [];
    const p = await puppet({ calls: async (call) => (calls.push(call.method), []) });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let heard!: () => void;
    const first = new Promise<void>((resolve) => (heard = resolve));
    const events: TaskEventParams[] = [];
    const task = await p.connection.runTask({ taskId: 't1', text: 'x' }, (event) => {
      events.push(event);
      heard();
      return held;
    });
    await p.next((m) => (m.got as { method?: string } | undefined)?.method === 'task.run');
    p.send({ v: 3, method: 'task.event', params: { kind: 'status', id: task.id, state: 'working', message: 'one' } });
    await first;
    assert.equal(p.connection.readingPaused, true, 'paused while the listener forwards the event');
    p.send({ v: 3, id: 2, method: 'agent.list' });
    await p.ping(1); // the puppet has written the call: it waits in the socket, unread
    assert.deepEqual(calls, []);
    release();
    assert.deepEqual((await p.answer(2)).result, []);
    assert.deepEqual(calls, ['agent.list']);
    assert.equal(p.connection.readingPaused, false);
    assert.equal(events.length, 1);
  });
});
