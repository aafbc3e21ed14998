/**
 * Approvals and questions through the broker to the root, with real child processes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApprovalRequest, QuestionToRoot } from '../../main/broker/index.js';
import { ProgressLog, plan, startBroker } from './helpers.js';

const QUESTION = [{ id: 'q1', question: 'Which database?', options: ['Postgres', 'SQLite'] }];

describe('human.ask climbs the caller chain', () => {
  it('a depth-2 question reaches the root stamped with the leaf after the middle worker escalates; the answer reaches the leaf', async () => {
    const t = startBroker(['mid', 'leaf']);
    try {
      const seen: QuestionToRoot[] = [];
      t.root.onQuestion((request) => {
        seen.push(request);
        return [{ id: 'q1', answer: 'Postgres' }];
      });
      const result = await t.root.invoke('mid', plan({ answering: 'escalate', then: { delegate: { to: 'leaf', prompt: { ask: QUESTION } } } }));
      assert.equal(result.success, true, result.error);
      assert.deepEqual(seen, [{ questions: QUESTION, asker: { agent: 'leaf-0', chain: ['root', 'mid', 'leaf'] } }]);
      const leaf = JSON.parse(result.response) as { response: string };
      assert.deepEqual(JSON.parse(leaf.response), [{ id: 'q1', answer: 'Postgres', custom: false }]);
    } finally {
      await t.close();
    }
  });

  it('a question the middle worker answers never reaches the root', async () => {
    const t = startBroker(['mid', 'leaf']);
    try {
      let rootAsked = 0;
      t.root.onQuestion(() => {
        rootAsked++;
        return [];
      });
      const progress = new ProgressLog();
      const result = await t.root.invoke('mid', plan({ answering: [{ id: 'q1', answer: 'SQLite' }], then: { delegate: { to: 'leaf', prompt: { ask: QUESTION } } } }), { onProgress: progress.push });
      const leaf = JSON.parse(result.response) as { response: string };
      assert.deepEqual(JSON.parse(leaf.response), [{ id: 'q1', answer: 'SQLite', custom: false }]);
      assert.equal(rootAsked, 0);
      assert.ok(progress.events.some((e) => 'Step' in e && e.Step === 'mid-0 was asked by leaf-0'));
    } finally {
      await t.close();
    }
  });

  it('a root call with no question handler fails with the question quoted and metadata.clarification, leaving no process', async () => {
    const t = startBroker(['mid', 'leaf']);
    try {
      const result = await t.root.invoke('mid', plan({ delegate: { to: 'leaf', prompt: { ask: QUESTION } } }));
      assert.equal(result.success, false);
      assert.equal(result.cancelled_by_user, false);
      assert.match(result.error ?? '', /leaf-0 asked "Which database\?" and this call has no question handler/);
      const clarification = result.metadata?.clarification;
      assert.match(clarification?.id ?? '', /^req-\d+$/);
      assert.deepEqual(clarification, { id: clarification?.id, questions: QUESTION, asker: { agent: 'leaf-0', chain: ['root', 'mid', 'leaf'] } });
      assert.deepEqual(t.alive(), []);
    } finally {
      await t.close();
    }
  });
});

describe('human.approve goes straight to the root', () => {
  it('the asker is stamped by the broker, whatever the worker wrote; verdicts go to their own askers', async () => {
    const t = startBroker(['a', 'b']);
    try {
      const seen: ApprovalRequest[] = [];
      t.root.onApproval((request) => {
        seen.push(request);
        return request.asker.agent === 'a-0' ? 'approved' : 'denied';
      });
      // Both workers use their own request ids (each numbers from 1): each must get only its own verdict.
      const forged = { agent: 'root', chain: ['root'] };
      const [a, b] = await Promise.all([
        t.root.invoke('a', plan({ approve: { kind: 'exec', command_or_path: '[shell] echo a', asker: forged } })),
        t.root.invoke('b', plan({ approve: { kind: 'write', command_or_path: 'src/b.ts' } })),
      ]);
      assert.deepEqual(JSON.parse(a.response), ['approved']);
      assert.deepEqual(JSON.parse(b.response), ['denied']);
      const byAgent = Object.fromEntries(seen.map((r) => [r.asker.agent, r]));
      assert.deepEqual(byAgent['a-0'], { kind: 'exec', command_or_path: '[shell] echo a', asker: { agent: 'a-0', chain: ['root', 'a'] } });
      assert.deepEqual(byAgent['b-0'], { kind: 'write', command_or_path: 'src/b.ts', asker: { agent: 'b-0', chain: ['root', 'b'] } });
    } finally {
      await t.close();
    }
  });

  it('the fifth pending approval of a connection is denied without the root being asked', async () => {
    const t = startBroker(['busy']);
    try {
      const waiting: (() => void)[] = [];
      let asked = 0;
      const fourAsked = new Promise<void>((resolve) => {
        t.root.onApproval(() => {
          asked++;
          if (asked === 4) resolve();
          return new Promise((approve) => waiting.push(() => approve('approved')));
        });
      });
      const progress = new ProgressLog();
      const call = t.root.invoke('busy', plan({ approve: { kind: 'exec', command_or_path: 'make' }, times: 5 }), { onProgress: progress.push });
      // The four are released only once the fifth has come back denied: it was refused while four waited.
      await Promise.all([fourAsked, progress.until((e) => 'Step' in e && e.Step === 'busy-0 got denied')]);
      for (const approve of waiting) approve();
      const verdicts = JSON.parse((await call).response) as string[];
      assert.equal(asked, 4);
      assert.deepEqual([...verdicts].sort(), ['approved', 'approved', 'approved', 'approved', 'denied']);
    } finally {
      await t.close();
    }
  });

  it('without an approval handler, denied; a worker hanging up withdraws its pending approval', async () => {
    const t = startBroker(['asker']);
    try {
      const none = await t.root.invoke('asker', plan({ approve: { kind: 'exec', command_or_path: 'rm -rf build' } }));
      assert.deepEqual(JSON.parse(none.response), ['denied']);
      const withdrawn = new Promise<string>((resolve) => {
        t.root.onApproval((request, signal) => {
          const pid = t.pids().find((p) => t.alive().includes(p));
          signal.addEventListener('abort', () => resolve(request.asker.agent), { once: true });
          if (pid !== undefined) process.kill(pid, 'SIGKILL'); // the worker hangs up while the root decides
          return new Promise(() => {});
        });
      });
      const result = await t.root.invoke('asker', plan({ approve: { kind: 'exec', command_or_path: 'make install' } }));
      assert.equal(await withdrawn, 'asker-1');
      assert.equal(result.success, false);
      assert.match(result.error ?? '', /disconnected/);
    } finally {
      await t.close();
    }
  });
});
