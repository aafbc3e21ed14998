/**
 * `ParticipantConnection.request`: the broker's own requests to a worker (a relayed `human.ask`),
 * over an in-memory stream with the worker played by hand: the frame sent, the worker's result and
 * error, withdrawal by signal (req.cancel, the late answer dropped), and a close; and, with a
 * puppet worker on a real socketpair, that a withdrawn request is forgotten by the codec.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CallError, serveConnection } from '../../main/fabric/index.js';
import { HELLO, memoryPeer, newFabric, puppetOpener } from './helpers.js';

const RELAYED = {
  question: 'Which database?',
  request: { questions: [{ id: 'q1', question: 'Which database?', options: ['pg', 'sqlite'] }], asker: { agent: 'helper-0', chain: ['root', 'lead', 'helper'] } },
};

async function connected() {
  const fabric = newFabric();
  const worker = memoryPeer();
  const connection = serveConnection(worker.stream, fabric.registry, fabric.directory.admit('lead'), { log: () => {} });
  worker.write(HELLO);
  await connection.hello;
  await worker.linesAtLeast(1); // the hello's answer
  return { connection, worker };
}

const frame = (line: string | undefined) => JSON.parse(line ?? 'null') as Record<string, unknown>;

describe('the broker asks a worker (request)', () => {
  it("sends a human.ask request under the broker's own ids and resolves with the worker's answer", async () => {
    const { connection, worker } = await connected();
    const first = connection.request('human.ask', RELAYED);
    const second = connection.request('human.ask', RELAYED);
    await worker.linesAtLeast(3);
    assert.deepEqual(frame(worker.lines[1]), { v: 3, id: 1, method: 'human.ask', params: RELAYED });
    assert.equal(frame(worker.lines[2]).id, 2);
    // Answered out of order, each under its own id.
    worker.write('{"v":3,"id":2,"result":"escalate"}');
    worker.write('{"v":3,"id":1,"result":{"answers":[{"id":"q1","answer":"pg"}]}}');
    assert.deepEqual(await first, { answers: [{ id: 'q1', answer: 'pg', custom: false }] });
    assert.equal(await second, 'escalate');
    assert.ok(connection.isOpen);
  });

  it("rejects with a CallError carrying the worker's error", async () => {
    const { connection, worker } = await connected();
    const asked = connection.request('human.ask', RELAYED);
    await worker.linesAtLeast(2);
    worker.write('{"v":3,"id":1,"error":{"kind":"failed","reason":"no idea","message":"no idea"}}');
    await assert.rejects(asked, (err: unknown) => err instanceof CallError && err.error.kind === 'failed' && err.message === 'no idea');
    assert.ok(connection.isOpen);
  });

  it('a task.run and a request share the id space and are told apart by their answers', async () => {
    const { connection, worker } = await connected();
    const task = await connection.runTask({ taskId: 't', text: 'go' });
    const asked = connection.request('human.ask', RELAYED);
    await worker.linesAtLeast(3);
    assert.equal(task.id, 1);
    assert.equal(frame(worker.lines[2]).id, 2);
    worker.write('{"v":3,"id":2,"result":"escalate"}');
    worker.write('{"v":3,"id":1,"result":{"state":"completed"}}');
    assert.equal(await asked, 'escalate');
    assert.deepEqual(await task.outcome, { state: 'completed' });
  });

  it('an aborted signal sends req.cancel for the request and rejects at once; the late answer is dropped', async () => {
    const { connection, worker } = await connected();
    const withdraw = new AbortController();
    const asked = connection.request('human.ask', RELAYED, withdraw.signal);
    withdraw.abort();
    await assert.rejects(asked, { name: 'AbortError' });
    await worker.linesAtLeast(3);
    assert.equal(frame(worker.lines[1]).method, 'human.ask');
    assert.deepEqual(frame(worker.lines[2]), { v: 3, method: 'req.cancel', params: { id: 1 } });
    // The worker's answer after the withdrawal settles nothing and closes nothing.
    worker.write('{"v":3,"id":1,"error":{"kind":"cancelled","reason":"withdrawn","message":"cancelled: withdrawn"}}');
    const next = connection.request('human.ask', RELAYED);
    await worker.linesAtLeast(4);
    worker.write('{"v":3,"id":2,"result":"escalate"}');
    assert.equal(await next, 'escalate');
    assert.ok(connection.isOpen);
  });

  it('an already aborted signal sends nothing', async () => {
    const { connection, worker } = await connected();
    const withdraw = new AbortController();
    withdraw.abort();
    await assert.rejects(connection.request('human.ask', RELAYED, withdraw.signal), { name: 'AbortError' });
    const next = connection.request('human.ask', RELAYED);
    await worker.linesAtLeast(2);
    assert.equal(worker.lines.length, 2);
    assert.equal(frame(worker.lines[1]).id, 1); // the aborted request never took an id
    worker.write('{"v":3,"id":1,"result":"escalate"}');
    assert.equal(await next, 'escalate');
  });

  it('a request still waiting when the connection closes rejects naming the disconnect; one after it rejects at once', async () => {
    const { connection, worker } = await connected();
    const asked = connection.request('human.ask', RELAYED);
    await worker.linesAtLeast(2);
    worker.end();
    await assert.rejects(asked, /disconnected: the worker closed the connection/);
    await assert.rejects(connection.request('human.ask', RELAYED), /disconnected: the worker closed the connection/);
  });
});

describe('withdrawn requests over a real socketpair', () => {
  const openPuppet = puppetOpener();

  it("a withdrawn relayed question is forgotten by the codec: the worker's late answer to it is dropped as naming nothing in flight", async () => {
    const logged: string[] = [];
    const p = await openPuppet({ log: (message) => logged.push(message) });
    const withdrawn: Promise<unknown>[] = [];
    for (let i = 0; i < 3; i++) {
      const withdraw = new AbortController();
      withdrawn.push(assert.rejects(p.connection.request('human.ask', RELAYED, withdraw.signal), { name: 'AbortError' }));
      withdraw.abort();
    }
    await Promise.all(withdrawn);
    const next = p.connection.request('human.ask', RELAYED);
    await p.next((m) => (m.got as { id?: number } | undefined)?.id === 4);
    // Late answers to the three withdrawn ones, then the answer to the one still asked.
    for (const id of [1, 2, 3]) p.send(`{"v":3,"id":${id},"result":"escalate"}`);
    p.send('{"v":3,"id":4,"result":"escalate"}');
    assert.equal(await next, 'escalate');
    assert.ok(p.connection.isOpen);
    assert.equal(logged.filter((line) => /dropped a result for id [123], which is not in flight/.test(line)).length, 2, logged.join('\n')); // the 1st and 2nd drops are logged, the 3rd is not (1, 2, 4, 8…)
  });
});
