/**
 * What fails one call, and what fails nothing, on real children: the 33rd call in
 * flight, the call over the rate, a reply too large for the worker and a late response each cost
 * one call or one frame; a full outbound queue only makes the producer wait.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_FRAME_BYTES, MAX_WAITING_TASK_RUNS, OUTBOUND_QUEUE_BYTES, OUTBOUND_QUEUE_FRAMES, type CallHandler } from '../../main/fabric/index.js';
import { puppetOpener } from './helpers.js';

const puppet = puppetOpener();

const list = (id: number) => `{"v":3,"id":${id},"method":"agent.list"}`;

describe('what fails one call only', () => {
  it('the 33rd call in flight is refused alone', async () => {
    const held: (() => void)[] = [];
    const calls: CallHandler = () => new Promise((resolve) => held.push(() => resolve([])));
    const p = await puppet({ calls });
    for (let id = 2; id <= 34; id++) p.send(list(id));
    const refused = await p.answer(34);
    assert.deepEqual(refused.error, {
      kind: 'refused',
      reason: 'too many calls in flight: at most 32 per connection',
      message: 'refused: too many calls in flight: at most 32 per connection',
    });
    assert.equal(held.length, 32);
    held.forEach((release) => release());
    for (let id = 2; id <= 33; id++) assert.deepEqual((await p.answer(id)).result, []);
    assert.ok(p.connection.isOpen);
  });

  it('the call over the rate (10/s, burst 32) is refused alone, and time brings a token back', async () => {
    let clock = 0;
    const p = await puppet({ calls: async () => [], limits: { now: () => clock } });
    for (let id = 2; id <= 33; id++) {
      p.send(list(id));
      assert.deepEqual((await p.answer(id)).result, []);
    }
    p.send(list(34));
    assert.deepEqual((await p.answer(34)).error, {
      kind: 'refused',
      reason: 'too many calls: at most 10 per second per connection',
      message: 'refused: too many calls: at most 10 per second per connection',
    });
    clock += 100; // one token
    p.send(list(35));
    assert.deepEqual((await p.answer(35)).result, []);
    p.send(list(36));
    assert.equal(((await p.answer(36)).error as { kind: string }).kind, 'refused');
    assert.ok(p.connection.isOpen);
  });

  it("a reply too large for the worker's frame cap fails that call, not the connection", async () => {
    const huge = 'x'.repeat(MAX_FRAME_BYTES);
    const p = await puppet({
      calls: async (call) =>
        call.method === 'agent.list' && call.id === 2
          ? [{ name: 'big', displayName: 'Big', description: huge, version: '1', skills: [], capabilities: { streaming: true }, origin: 'local' }]
          : [],
    });
    p.send(list(2));
    const failed = await p.answer(2);
    const error = failed.error as { kind: string; message: string };
    assert.equal(error.kind, 'failed');
    assert.match(error.message, /over the receiver's frame cap of 34603008/);
    p.send(list(3));
    assert.deepEqual((await p.answer(3)).result, []);
  });

  it('an error thrown by the handler answers that call with failed', async () => {
    const p = await puppet({ calls: async () => Promise.reject(new Error('the directory is down')) });
    p.send(list(2));
    assert.deepEqual((await p.answer(2)).error, { kind: 'failed', reason: 'the directory is down', message: 'the directory is down' });
  });
});

describe('what is dropped', () => {
  it('a late response and a stale cancel are dropped and logged 1st, 2nd, 4th…; the connection stays', async () => {
    const logged: string[] = [];
    const p = await puppet({ log: (m) => logged.push(m) });
    const task = await p.connection.runTask({ taskId: 't', text: 'x' });
    await p.next((m) => (m.got as { method?: string } | undefined)?.method === 'task.run');
    p.send({ v: 3, id: task.id, result: { state: 'completed' } });
    assert.deepEqual(await task.outcome, { state: 'completed' });
    p.send({ v: 3, id: task.id, result: { state: 'failed' } }); // late: the task is over
    p.send({ v: 3, id: 77, error: { kind: 'failed', reason: 'r', message: 'r' } }); // names nothing
    p.send({ v: 3, method: 'req.cancel', params: { id: 5 } }); // cancels nothing
    p.send({ v: 3, method: 'task.event', params: { kind: 'status', id: 9, state: 'working' } }); // no such task
    p.send(list(2)); // a barrier: answered after the four above were read
    await p.answer(2);
    assert.ok(p.connection.isOpen);
    assert.equal(logged.length, 3, logged.join('\n')); // drops 1, 2 and 4
    assert.match(logged[0]!, /dropped a result for id 1, which is not in flight \(drop #1/);
    assert.match(logged[2]!, /drop #4/);
  });
});

describe('neither', () => {
  it('a full outbound queue makes the producer wait and keeps the slow reader; one task.run waits, the next is refused at once', async () => {
    const p = await puppet();
    p.command({ pause: true });
    await p.next((m) => m.paused === true);
    const text = 'y'.repeat(64 * 1024);
    const count = 200;
    // Settled as they come: the refused ones reject at once.
    const sent = Promise.allSettled(Array.from({ length: count }, (_, n) => p.connection.runTask({ taskId: `t${n}`, text }).then((task) => task.outcome)));
    // The reader is not reading: past the socket's buffers the queue fills (by bytes: 64 KiB frames)
    // and one task.run waits; each after it is refused (MAX_WAITING_TASK_RUNS), not held.
    assert.ok(p.connection.outbound.length < OUTBOUND_QUEUE_FRAMES);
    assert.ok(p.connection.outbound.length * text.length <= OUTBOUND_QUEUE_BYTES);
    assert.equal(p.connection.outbound.waiters, MAX_WAITING_TASK_RUNS);
    assert.ok(p.connection.isOpen);
    p.command({ answerTasks: true, resume: true });
    const results = await sent;
    const completed = results.filter((r) => r.status === 'fulfilled' && r.value.state === 'completed').length;
    const refused = results.filter((r) => r.status === 'rejected' && /^refused: puppet-0 is not reading: a task\.run already waits for room in its queue/.test((r.reason as Error).message)).length;
    assert.ok(completed > MAX_WAITING_TASK_RUNS && refused > 0, `${completed} completed, ${refused} refused`);
    assert.equal(completed + refused, count);
    assert.ok(p.connection.isOpen);
  });
});
