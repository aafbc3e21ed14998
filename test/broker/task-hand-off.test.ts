/**
 * The hand-off from a call to its callee's task and back (Broker.invoke → runTask →
 * ParticipantConnection.sendTask): whatever happens while the task is being sent, the broker's
 * books end with the call. Real children: the scriptable test agent as a long-lived participant.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AGENT, plan, startBroker } from './helpers.js';

const QUESTION = [{ id: 'q1', question: 'Which database?', options: ['Postgres', 'SQLite'] }];

/** The broker's task tree, as the tests of participants.test.ts look at it. */
interface TreeView {
  servingNames(): string[];
  liveTasks: string[];
}

describe('a task that cannot be sent', () => {
  it("a root prompt the wire cannot encode rejects the call and leaves no task behind: the participant's next question reaches the root", async () => {
    const t = startBroker(['lead']);
    try {
      await t.broker.openParticipant('coder', process.execPath, ['--import', 'tsx', AGENT, '--serve-many'], { env: { ...process.env, CHATTY_TEST_PIDS: t.pidsDir } });
      const tree = (t.broker as unknown as { tree: TreeView }).tree;
      // A careless embedder (plain JavaScript): a prompt JSON cannot carry, so encoding the task.run throws.
      const unencodable = { text: 'plan', at: 1n } as unknown as string;
      await assert.rejects(t.root.invoke('coder-0', unencodable), /BigInt/);
      assert.deepEqual(tree.servingNames(), [], 'no participant is left running the task');
      assert.deepEqual(tree.liveTasks, [], 'no task is left owned');
      await assert.rejects(t.root.invoke('lead', unencodable), /BigInt/);
      assert.deepEqual(tree.liveTasks, [], "no task is left owned by the virtual agent's worker");
      // Not acting within a task that never went out: its question is its own, and climbs to the root.
      t.root.onQuestion(() => [{ id: 'q1', answer: 'Postgres' }]);
      const asked = await t.root.invoke('coder-0', plan({ ask: QUESTION }));
      assert.equal(asked.success, true, asked.error);
      assert.deepEqual(JSON.parse(asked.response), [{ id: 'q1', answer: 'Postgres', custom: false }]);
    } finally {
      await t.close();
    }
  });
});
