/**
 * WorkerSession's edges in memory (test/fabric/helpers.ts's memoryPeer plays the broker by hand):
 * a progress listener that throws, progress after a withdrawal, a close with calls and relayed
 * questions in flight.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WorkerSession, type ProgressEvent } from '../../main/worker/index.js';
import { CARD, memoryPeer } from '../fabric/helpers.js';

async function connected() {
  const broker = memoryPeer();
  const said = WorkerSession.hello(broker.stream, CARD);
  broker.write('{"v":3,"id":1,"result":{"name":"w-0","scope":"root","owner":null}}');
  const { session } = await said;
  return { broker, session };
}

describe('WorkerSession', () => {
  it('a progress listener that throws is logged; the call still resolves', async (t) => {
    const warned = t.mock.method(console, 'warn', () => {});
    const { broker, session } = await connected();
    const seen: ProgressEvent[] = [];
    const invoked = session.invokeAgent('helper', 'go', {
      onProgress: (event) => {
        seen.push(event);
        throw new Error('listener bug');
      },
    });
    broker.write('{"v":3,"method":"req.progress","params":{"id":2,"event":{"Step":"one"}}}');
    broker.write('{"v":3,"method":"req.progress","params":{"id":2,"event":{"Text":"two"}}}');
    broker.write('{"v":3,"id":2,"result":{"success":true,"response":"two"}}');
    assert.deepEqual(await invoked, { success: true, response: 'two', messages: [], cancelled_by_user: false });
    assert.deepEqual(seen, [{ Step: 'one' }, { Text: 'two' }]);
    assert.equal(warned.mock.callCount(), 2);
    assert.match(String(warned.mock.calls[0]!.arguments[0]), /onProgress listener threw: listener bug/);
  });

  it('after a withdrawal, progress and the answer for that call reach nobody', async () => {
    const { broker, session } = await connected();
    const seen: ProgressEvent[] = [];
    const withdraw = new AbortController();
    const invoked = session.invokeAgent('helper', 'go', { signal: withdraw.signal, onProgress: (event) => seen.push(event) });
    withdraw.abort();
    await assert.rejects(invoked, { name: 'AbortError' });
    broker.write('{"v":3,"method":"req.progress","params":{"id":2,"event":{"Step":"late"}}}');
    broker.write('{"v":3,"id":2,"error":{"kind":"cancelled","reason":"withdrawn","message":"cancelled: withdrawn"}}');
    const listed = session.listAgents();
    broker.write('{"v":3,"id":3,"result":[]}');
    assert.deepEqual(await listed, []);
    assert.deepEqual(seen, []);
    assert.deepEqual(broker.lines.slice(1).map((line) => JSON.parse(line) as unknown), [
      { v: 3, id: 2, method: 'agent.invoke', params: { agent: 'helper', prompt: 'go' } },
      { v: 3, method: 'req.cancel', params: { id: 2 } },
      { v: 3, id: 3, method: 'agent.list' },
    ]);
  });

  it('a close rejects the calls in flight and aborts the relayed questions; nothing is written after it', async () => {
    const { broker, session } = await connected();
    const asked = new Promise<AbortSignal>((resolve) =>
      session.onQuestion((_request, signal) => {
        resolve(signal);
        return new Promise(() => {});
      }),
    );
    const approval = session.approve('exec', 'make');
    broker.write('{"v":3,"id":7,"method":"human.ask","params":{"question":"q?","request":{"questions":[{"id":"q1","question":"q?"}],"asker":{"agent":"h-0","chain":["root","w","h"]}}}}');
    const handlerSignal = await asked;
    assert.equal(handlerSignal.aborted, false);
    broker.end();
    await assert.rejects(approval, /disconnected: the broker closed the connection/);
    assert.ok(handlerSignal.aborted);
    assert.equal(await session.closed, 'the broker closed the connection');
    await assert.rejects(session.listAgents(), /disconnected/);
    assert.equal(broker.lines.length, 2); // the hello and the approval
  });
});
