/**
 * What the broker keeps of a node once it has ended: nothing. Node names are never reused, and a
 * busy (or hostile, calling at its rate limit) tree makes a node per task: kept, each cost ~470
 * bytes for the broker's life. Mail to an ended name still says `recipient_ended`. Real workers.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plan, startBroker } from './helpers.js';

interface Internals {
  nodes: { byName: Map<string, unknown> };
  inflight: { byCaller: Map<string, unknown> };
  mail: { sent: Map<string, number> };
}

test('six tasks of a virtual agent, each posting to the root: once they have ended the broker keeps no node, count or allowance for them, and mail to them is recipient_ended', async () => {
  const t = startBroker(['helper']);
  try {
    for (let i = 0; i < 6; i++) {
      const result = await t.root.invoke('helper', plan({ seq: [{ post: { to: 'root', text: `note ${i}` } }] }));
      assert.equal(result.success, true, result.error);
    }
    const inside = t.broker as unknown as Internals;
    assert.deepEqual([...inside.nodes.byName.keys()], ['root'], 'the nodes kept');
    assert.deepEqual([...inside.inflight.byCaller.keys()], ['root'], 'the in-flight counts kept');
    assert.deepEqual([...inside.mail.sent.keys()], [], 'the allowances kept');
    assert.deepEqual(await t.root.post('helper-3', 'after its end'), { status: 'refused', reason: 'recipient_ended' });
    assert.deepEqual(await t.root.post('helper-6', 'never was'), { status: 'refused', reason: 'not_on_tree' });
    assert.deepEqual(await t.root.post('helper-03', 'another spelling'), { status: 'refused', reason: 'not_on_tree' });
  } finally {
    await t.close();
  }
});
