/**
 * A request of the broker's own that cannot be encoded (a value JSON cannot carry) never went out:
 * the codec must not count it in flight, or the peer's later answer naming that id would be taken
 * as the answer to a request it never saw. Over a real socketpair with a puppet worker, and on the
 * codec itself.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameCodec, type TaskRunParams } from '../../main/fabric/index.js';
import { HELLO, puppetOpener } from './helpers.js';

const open = puppetOpener();

/** A task.run JSON cannot encode: what a careless embedder in plain JavaScript could hand the broker. */
const UNENCODABLE = { taskId: 't', text: 'go', budget: 1n } as unknown as TaskRunParams;

describe('a request that fails to encode', () => {
  it('leaves no id in flight in the codec, and the next request gets the id it would have had', () => {
    const codec = FrameCodec.forBroker({ log: () => {} });
    codec.push(Buffer.from(`${HELLO}\n`));
    codec.respond(1, { name: 'w-0', scope: 'root', owner: null });
    assert.throws(() => codec.request({ method: 'task.run', params: UNENCODABLE }), /BigInt/);
    assert.equal(codec.ownInFlight.size, 0);
    assert.equal(codec.request({ method: 'task.run', params: { taskId: 't', text: 'go' } }).id, 1);
  });

  it("the worker's answer naming the id of a task.run that never went out is dropped as not in flight", async () => {
    const logged: string[] = [];
    const p = await open({ log: (message) => logged.push(message) });
    assert.throws(() => p.connection.startTask(UNENCODABLE), /BigInt/);
    // The worker answers an id the broker never sent: an orphan, dropped and logged, the connection kept.
    p.send({ v: 3, id: 1, result: { state: 'completed' } });
    // A call of the worker's own behind it: once it is answered, the broker has read the answer before it.
    p.send({ v: 3, id: 2, method: 'agent.list' });
    await p.answer(2);
    const task = await p.connection.runTask({ taskId: 'u', text: 'next' });
    const got = await p.next((m) => (m.got as { method?: string } | undefined)?.method === 'task.run');
    assert.equal((got.got as { id: number }).id, task.id);
    assert.deepEqual(logged, ['dropped a result for id 1, which is not in flight (drop #1 on this connection)']);
    assert.ok(p.connection.isOpen);
  });
});
