/**
 * A task.run too large for its callee's frame cap is refused before anything is written: the
 * callee would otherwise close its connection for it (a participant killed by another worker's
 * call, or by a root prompt). Real children over real socketpairs: `capped-worker` reads with a
 * cap of its own, as every worker's codec does.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { MAX_FRAME_BYTES, type WireError } from '../../main/fabric/index.js';
import { RootCallError } from '../../main/broker/index.js';
import { ProgressLog, plan, startBroker, until, type TestBroker } from './helpers.js';

const CAPPED = fileURLToPath(new URL('./children/capped-worker.ts', import.meta.url));
const CAP = 64 * 1024;

/** The broker's task tree, as task-hand-off.test.ts looks at it. */
interface TreeView {
  servingNames(): string[];
  liveTasks: string[];
}

const treeOf = (t: TestBroker): TreeView => (t.broker as unknown as { tree: TreeView }).tree;

/** Opens a long-lived `capped-worker` as `<spec>-0`, reading with `cap` (the wire's when undefined). */
async function openCapped(t: TestBroker, spec: string, cap?: number): Promise<void> {
  const env = { ...process.env, ...(cap !== undefined ? { CHATTY_TEST_MAX_FRAME: String(cap) } : {}) };
  await t.broker.openParticipant(spec, process.execPath, ['--import', 'tsx', CAPPED], { env });
}

/** The callee is still there and serves its next task; nothing is left running or owned. */
async function calleeUntouched(t: TestBroker): Promise<void> {
  const tree = treeOf(t);
  assert.deepEqual(tree.servingNames(), [], 'no participant is left running the task');
  assert.deepEqual(tree.liveTasks, [], 'no task is left owned');
  const next = await t.root.invoke('coder-0', 'next');
  assert.equal(next.success, true, next.error);
  assert.equal(next.response, 'got 4 characters');
}

const refusedFor = (bytesOver: number, error: WireError): void => {
  assert.equal(error.kind, 'failed');
  assert.match(error.message, new RegExp(`^the task\\.run is \\d+ bytes, over coder-0's frame cap of ${bytesOver}$`));
};

describe("a task.run over its callee's frame cap", () => {
  it("a worker's agent.invoke whose prompt makes the callee's task.run too large fails that call with `failed`, and the callee is untouched", async () => {
    const t = startBroker([], { serve: { workerMaxFrameBytes: CAP } });
    try {
      await openCapped(t, 'coder', CAP);
      await openCapped(t, 'caller', CAP); // after the coder: the coder is on its roster
      // The caller's own line fits the broker's cap; the task.run it asks for does not fit the callee's.
      const asked = await t.root.invoke('caller-0', JSON.stringify({ invoke: { to: 'coder-0', bytes: CAP } }));
      assert.equal(asked.success, true, asked.error);
      const answer = JSON.parse(asked.response) as { error?: WireError };
      assert.ok(answer.error, `the caller got an error, not ${asked.response.slice(0, 200)}`);
      refusedFor(CAP, answer.error);
      await calleeUntouched(t);
    } finally {
      await t.close();
    }
  });

  it("a root prompt too large for the callee's cap rejects the root's call with `failed`, and the callee is untouched", async () => {
    const t = startBroker([], { serve: { workerMaxFrameBytes: CAP } });
    try {
      await openCapped(t, 'coder', CAP);
      await assert.rejects(t.root.invoke('coder-0', 'x'.repeat(CAP)), (err: unknown) => {
        assert.ok(err instanceof RootCallError, String(err));
        refusedFor(CAP, err.error);
        return true;
      });
      await calleeUntouched(t);
    } finally {
      await t.close();
    }
  });

  it('with the default caps (MAX_FRAME_BYTES on both ends) a prompt that fills a line is refused too, for a participant and a virtual agent', async () => {
    const t = startBroker(['lead']);
    try {
      await openCapped(t, 'coder');
      const huge = 'x'.repeat(MAX_FRAME_BYTES);
      await assert.rejects(t.root.invoke('coder-0', huge), (err: unknown) => {
        assert.ok(err instanceof RootCallError, String(err));
        refusedFor(MAX_FRAME_BYTES, err.error);
        return true;
      });
      await calleeUntouched(t);
      // A virtual agent's task is refused before its worker is started.
      await assert.rejects(t.root.invoke('lead', huge), (err: unknown) => err instanceof RootCallError && err.error.kind === 'failed' && /over lead's frame cap of 34603008$/.test(err.message));
      assert.deepEqual(treeOf(t).liveTasks, [], 'no task is left owned');
      assert.deepEqual(t.pids(), [], 'no worker was started');
    } finally {
      await t.close();
    }
  });

  it("a virtual agent's task.run over its worker's cap is refused before a slot is taken or a worker started, with the participant path's error", { timeout: 180_000 }, async () => {
    const t = startBroker(['lead'], { maxWorkers: 1, serve: { workerMaxFrameBytes: CAP } });
    try {
      const tooLarge = (err: unknown): boolean => {
        assert.ok(err instanceof RootCallError, String(err));
        assert.equal(err.error.kind, 'failed');
        assert.match(err.message, new RegExp(`^the task\\.run is \\d+ bytes, over lead's frame cap of ${CAP}$`));
        return true;
      };
      await assert.rejects(t.root.invoke('lead', 'x'.repeat(CAP)), tooLarge);
      assert.deepEqual(t.pids(), [], 'no worker was started (each writes its pid at its hello)');
      // The one slot held by a hanging worker: an oversized call still fails on its size, not on the slot it never takes.
      const progress = new ProgressLog();
      const controller = new AbortController();
      const hanging = t.root.invoke('lead', plan({ hang: true }), { onProgress: progress.push, signal: controller.signal });
      await until(() => progress.events.some((e) => 'Step' in e && e.Step.endsWith('waiting')), 'the worker waiting');
      assert.deepEqual(progress.events[0], { Admitted: 'lead-0' }, 'the refused call admitted no node (lead-0 is the first)');
      await assert.rejects(t.root.invoke('lead', 'x'.repeat(CAP)), tooLarge);
      await assert.rejects(t.root.invoke('lead', plan({ echo: 'a second' })), /maxWorkers/);
      controller.abort();
      assert.equal((await hanging).cancelled_by_user, true);
      assert.equal(t.pids().length, 1, 'only the hanging call started a worker');
    } finally {
      await t.close();
    }
  });
});
