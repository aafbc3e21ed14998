/**
 * A request of the broker's whose line is over the worker's frame cap (`workerMaxFrameBytes`) is
 * never written: the worker would close its connection for it. Over a real socketpair with a
 * puppet worker, which reports every line it gets.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CallError, FrameCodec, checkTaskRunSize, encodeFrame } from '../../main/fabric/index.js';
import type { TaskRunParams } from '../../main/fabric/wire/broker-to-worker.js';
import { puppetOpener } from './helpers.js';

const open = puppetOpener();
const CAP = 4096;
/** A request that went out after all waits for an answer the puppet never sends: fail, not hang. */
const FAIL_AFTER = { timeout: 10_000 };

const tooLarge = (what: string) => (err: unknown): boolean =>
  err instanceof CallError && err.error.kind === 'failed' && new RegExp(`^the ${what} is \\d+ bytes, over puppet-0's frame cap of ${CAP}$`).test(err.message);

describe("a broker request over the worker's frame cap", () => {
  it('a task.run rejects with `failed` before anything is written; the id is not used and the next task goes out', FAIL_AFTER, async () => {
    const p = await open({ workerMaxFrameBytes: CAP });
    await assert.rejects(p.connection.runTask({ taskId: 'big', text: 'x'.repeat(CAP) }), tooLarge('task.run'));
    assert.throws(() => p.connection.startTask({ taskId: 'big', text: 'é'.repeat(CAP / 2) }), tooLarge('task.run'));
    const task = await p.connection.runTask({ taskId: 'small', text: 'go' });
    const got = await p.next((m) => (m.got as { method?: string } | undefined)?.method === 'task.run');
    // The only task.run the worker got is the small one, under the broker's first id.
    assert.deepEqual(got.got, { v: 3, id: 1, method: 'task.run', params: { taskId: 'small', text: 'go' } });
    assert.equal(task.id, 1);
    assert.ok(p.connection.isOpen);
  });

  it('a relayed human.ask rejects the same way', FAIL_AFTER, async () => {
    const p = await open({ workerMaxFrameBytes: CAP });
    const request = { questions: [{ id: 'q1', question: 'x'.repeat(CAP), options: [] }], asker: { agent: 'a-0', chain: ['root', 'a'] } };
    await assert.rejects(p.connection.request('human.ask', { question: 'question-1', request }), tooLarge('human.ask'));
    assert.ok(p.connection.isOpen);
  });
});

describe("a task.run measured before its worker exists (checkTaskRunSize, a virtual agent's call)", () => {
  const task = (text: string): TaskRunParams => ({ taskId: 'task-1', text, spawnContext: { roster: ['lead', 'é'], workspace_root: '/tmp/w\u0001' } });
  const lineBytes = (params: TaskRunParams): number => Buffer.byteLength(encodeFrame({ v: 3, id: 1, method: 'task.run', params }));

  it('refuses exactly what the codec refuses, at the cap and one byte past it, with the error a connection gives', () => {
    const under = task('x'.repeat(CAP - lineBytes(task(''))));
    assert.equal(lineBytes(under), CAP);
    assert.doesNotThrow(() => checkTaskRunSize(under, 'lead', CAP));
    const over = { ...under, text: `${under.text}x` };
    assert.throws(() => checkTaskRunSize(over, 'lead', CAP), (err: unknown) => {
      assert.ok(err instanceof CallError);
      assert.equal(err.error.kind, 'failed');
      assert.equal(err.message, `the task.run is ${CAP + 1} bytes, over lead's frame cap of ${CAP}`);
      return true;
    });
    // The same measure as a connection's codec: the line it would send is one byte over too.
    assert.throws(() => FrameCodec.forBroker({ peerMaxFrameBytes: CAP }).request({ method: 'task.run', params: over }), { name: 'FrameTooLargeError', message: `the task.run is ${CAP + 1} bytes, over the receiver's frame cap of ${CAP}` });
  });
});
