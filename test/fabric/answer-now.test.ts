/**
 * `CallContext.answerNow`: a handler whose result is ready in a callback answers its call in that
 * turn, once; the handler's own promise, whenever it settles, changes nothing more.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serveConnection, type CallContext, type CallHandler } from '../../main/fabric/index.js';
import { HELLO, memoryPeer, newFabric } from './helpers.js';

async function served(calls: CallHandler, maxInFlight?: number) {
  const fabric = newFabric();
  const worker = memoryPeer();
  const connection = serveConnection(worker.stream, fabric.registry, fabric.directory.admit('lead'), { log: () => {}, calls, limits: { callsPerSecond: 1e9, burst: 1e9, maxInFlight } });
  worker.write(HELLO);
  await connection.hello;
  await worker.linesAtLeast(1); // the hello's answer
  return { worker, connection };
}

/** Waits (turn by turn, a bounded number of turns) until `ready()`. */
async function until(ready: () => boolean): Promise<void> {
  for (let turn = 0; !ready(); turn++) {
    if (turn > 10_000) throw new Error('never happened');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const list = (id: number) => `{"v":3,"id":${id},"method":"agent.list"}`;
const answers = (lines: string[], id: number) => lines.map((line) => JSON.parse(line) as { id?: number }).filter((frame) => frame.id === id);

describe('answerNow', () => {
  it('answers the call before its handler settles, and frees its place among the calls in flight', async () => {
    const contexts: CallContext[] = [];
    // Every call's promise stays pending: only answerNow can answer it.
    const { worker, connection } = await served((_call, context) => {
      contexts.push(context);
      return new Promise(() => {});
    });
    worker.write(list(2));
    await until(() => contexts.length >= 1);
    contexts[0]!.answerNow([]);
    await worker.linesAtLeast(2);
    assert.deepEqual(JSON.parse(worker.lines[1]!), { v: 3, id: 2, result: [] });
    // Its place among the 32 calls in flight is free again, and its id can be used again.
    for (let id = 2; id <= 33; id++) worker.write(list(id));
    await until(() => contexts.length >= 33);
    worker.write(list(34));
    await worker.linesAtLeast(3);
    assert.equal(answers(worker.lines, 34).length, 1, 'the 33rd held call is refused');
    assert.ok(connection.isOpen);
  });

  it('answers once: a second answerNow and the handler settling later are ignored', async () => {
    let settle!: (result: unknown) => void;
    let context!: CallContext;
    const { worker } = await served((_call, ctx) => {
      context = ctx;
      return new Promise((resolve) => (settle = resolve));
    });
    worker.write(list(2));
    await until(() => context !== undefined);
    context.answerNow(['first']);
    context.answerNow(['second']);
    settle(['third']);
    worker.write(list(3)); // a call after, answered by its own handler: the frames before it are all written by then
    await until(() => context.id === 3);
    context.answerNow([]);
    await worker.linesAtLeast(3);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      answers(worker.lines, 2).map((frame) => (frame as { result?: unknown }).result),
      [['first']],
    );
  });

  it('a result answerNow cannot encode fails the call with the reason', async () => {
    let context!: CallContext;
    const { worker } = await served((_call, ctx) => {
      context = ctx;
      return new Promise(() => {});
    });
    worker.write(list(2));
    await until(() => context !== undefined);
    context.answerNow({ count: 1n });
    await worker.linesAtLeast(2);
    const error = (JSON.parse(worker.lines[1]!) as { error: { kind: string; reason: string } }).error;
    assert.equal(error.kind, 'failed');
    assert.match(error.reason, /BigInt/);
  });

  /**
   * One place in flight: a call answered twice over (answerNow, then its handler failing or
   * throwing) frees it once, so a held call still fills it and the next is refused.
   */
  async function heldCallRefusesTheNext(worker: Awaited<ReturnType<typeof served>>['worker'], firstId: number): Promise<void> {
    worker.write(list(firstId)); // held: its handler never settles
    worker.write(list(firstId + 1));
    await until(() => answers(worker.lines, firstId + 1).length === 1);
    const refused = answers(worker.lines, firstId + 1)[0] as { error?: { kind: string; reason: string } };
    assert.equal(refused.error?.kind, 'refused');
    assert.match(refused.error.reason, /too many calls in flight: at most 1/);
    assert.equal(answers(worker.lines, firstId).length, 0);
  }

  it('answerNow then its handler rejecting: one answer, the result, and its place freed once', async () => {
    const contexts: CallContext[] = [];
    const rejects: ((err: Error) => void)[] = [];
    const { worker } = await served((_call, context) => {
      contexts.push(context);
      return new Promise((_resolve, reject) => rejects.push(reject));
    }, 1);
    worker.write(list(2));
    await until(() => contexts.length === 1);
    contexts[0]!.answerNow(['now']);
    rejects[0]!(new Error('late failure'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(answers(worker.lines, 2), [{ v: 3, id: 2, result: ['now'] }]);
    await heldCallRefusesTheNext(worker, 3);
  });

  it('a handler that throws in its own turn fails the call with the reason, and after answerNow is ignored', async () => {
    let n = 0;
    const { worker } = await served((_call, context) => {
      n++;
      if (n === 2) context.answerNow(['now']);
      if (n <= 2) throw new Error(`thrown ${n}`);
      return new Promise(() => {});
    }, 1);
    worker.write(list(2));
    await until(() => answers(worker.lines, 2).length === 1);
    const failed = answers(worker.lines, 2)[0] as { error?: { kind: string; reason: string } };
    assert.equal(failed.error?.kind, 'failed');
    assert.equal(failed.error.reason, 'thrown 1');
    worker.write(list(3));
    await until(() => answers(worker.lines, 3).length === 1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(answers(worker.lines, 3), [{ v: 3, id: 3, result: ['now'] }]);
    await heldCallRefusesTheNext(worker, 4);
  });

  it('a call whose connection closes before it is answered: nothing is written, answerNow and the handler settling after do nothing', async () => {
    let context!: CallContext;
    let settle!: (result: unknown) => void;
    const { worker, connection } = await served((_call, ctx) => {
      context = ctx;
      return new Promise((resolve) => (settle = resolve));
    });
    worker.write(list(2));
    await until(() => context !== undefined);
    const written = worker.lines.length;
    connection.close('the test closed it');
    assert.equal(context.signal.aborted, true);
    context.answerNow(['too late']);
    settle(['later still']);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(worker.lines.length, written);
  });
});
