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

  it('origin reaches the root handler as the worker set it', async () => {
    const t = startBroker(['relay']);
    try {
      const seen: QuestionToRoot[] = [];
      t.root.onQuestion((request) => {
        seen.push(request);
        return [{ id: 'q1', answer: 'SQLite' }];
      });
      const origin = 'peer:https://agents.example/a2a/planner?x=1#frag';
      const result = await t.root.invoke('relay', plan({ ask: QUESTION, origin }));
      assert.equal(result.success, true, result.error);
      assert.deepEqual(seen, [{ questions: QUESTION, asker: { agent: 'relay-0', chain: ['root', 'relay'] }, origin }]);
    } finally {
      await t.close();
    }
  });

  it("the asker's req.cancel withdraws the relayed copy from the middle worker (it gets req.cancel for it)", async () => {
    const t = startBroker(['mid', 'leaf']);
    try {
      t.root.onQuestion(() => assert.fail('the question reached the root'));
      const progress = new ProgressLog();
      // mid-0 holds the question and, once asked, withdraws its call to leaf-0: leaf-0's task is
      // cancelled, so leaf-0 withdraws its question; mid-0 ends its task only once its copy was withdrawn.
      const result = await t.root.invoke('mid', plan({ answering: 'hold', then: { seq: [
        { delegate: { to: 'leaf', prompt: { ask: QUESTION }, cancelOn: 'mid-0 was asked by leaf-0' } },
        { awaitWithdrawn: true },
      ] } }), { onProgress: progress.push });
      assert.equal(result.success, true, result.error);
      const steps = progress.events.flatMap((e) => ('Step' in e ? [e.Step] : []));
      assert.ok(steps.includes('mid-0: the question from leaf-0 was withdrawn'));
      assert.deepEqual(JSON.parse(result.response), { withdrew: 'leaf' });
      assert.deepEqual(t.alive(), []);
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

describe("the root's handlers", () => {
  it('setting another replaces the old one; removing a replaced one leaves the new one; removing the one set leaves none', async () => {
    const t = startBroker(['asker']);
    try {
      const calls: string[] = [];
      const removeFirstApproval = t.root.onApproval(() => (calls.push('first approval'), 'denied'));
      t.root.onApproval(() => (calls.push('second approval'), 'approved'));
      const removeFirstQuestion = t.root.onQuestion(() => (calls.push('first question'), [{ id: 'q1', answer: 'SQLite' }]));
      const removeSecondQuestion = t.root.onQuestion(() => (calls.push('second question'), [{ id: 'q1', answer: 'Postgres' }]));
      removeFirstApproval();
      removeFirstQuestion();
      const result = await t.root.invoke('asker', plan({ seq: [{ approve: { kind: 'exec', command_or_path: 'make' } }, { ask: QUESTION }] }));
      assert.equal(result.success, true, result.error);
      assert.equal(result.response, '["approved"][{"id":"q1","answer":"Postgres","custom":false}]');
      assert.deepEqual(calls, ['second approval', 'second question']);
      removeSecondQuestion();
      const unanswered = await t.root.invoke('asker', plan({ ask: QUESTION }));
      assert.ok(unanswered.metadata?.clarification, 'no question handler is left');
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
      const taskA = byAgent['a-0']?.task;
      const taskB = byAgent['b-0']?.task;
      assert.match(taskA ?? '', /^task-/);
      assert.match(taskB ?? '', /^task-/);
      assert.notEqual(taskA, taskB);
      assert.deepEqual(byAgent['a-0'], {
        kind: 'exec',
        command_or_path: '[shell] echo a',
        asker: { agent: 'a-0', chain: ['root', 'a'] },
        role: 'a',
        task: taskA,
        hidden: false,
        danger: [],
        proposals: [{ exact: '[shell] echo a' }],
      });
      // No workspace is recorded for b-0 (the broker has none): its relative path is not resolved.
      assert.deepEqual(byAgent['b-0'], { kind: 'write', command_or_path: 'src/b.ts', asker: { agent: 'b-0', chain: ['root', 'b'] }, role: 'b', task: taskB, hidden: false, danger: [], proposals: [{ exact: 'src/b.ts' }] });
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

  it("a worker's req.cancel withdraws its pending approval: the root handler's signal aborts while the worker lives on", async () => {
    const t = startBroker(['asker']);
    try {
      const controller = new AbortController();
      const withdrawn = new Promise<string>((resolve) => {
        t.root.onApproval((request, signal) => {
          signal.addEventListener('abort', () => resolve(`${request.asker.agent}: ${(signal.reason as Error).message}`), { once: true });
          controller.abort(); // the root cancels its call: asker-0's task gets req.cancel, and it withdraws its approval
          return new Promise(() => {});
        });
      });
      const result = await t.root.invoke('asker', plan({ approve: { kind: 'exec', command_or_path: 'make install' } }), { signal: controller.signal });
      assert.equal(await withdrawn, 'asker-0: cancelled by the worker');
      assert.equal(result.cancelled_by_user, true);
      assert.equal(result.error, 'asker-0 withdrew its approval', 'the worker ended its task itself, after the withdrawal');
      assert.deepEqual(t.alive(), []);
    } finally {
      await t.close();
    }
  });
});

describe('a malformed human.ask is refused at the wire', () => {
  it('no questions, too many, an empty or duplicate id, oversize text: refused, and no one is asked', async () => {
    const t = startBroker(['asker', 'mid']);
    try {
      let asked = 0;
      t.root.onQuestion(() => {
        asked++;
        return [];
      });
      const q = (id: string, question = 'Which?') => ({ id, question });
      const cases: [unknown[], string][] = [
        [[], 'refused: a human.ask must hold at least one question'],
        [Array.from({ length: 65 }, (_, i) => q(`q${i}`)), 'refused: a human.ask holds at most 64 questions, not 65'],
        [[q('')], 'refused: question 1 has an empty id'],
        [[q('a'), q('a')], 'refused: question 2\'s id "a" is used twice'],
        [[q('a', 'x'.repeat(16 * 1024 + 1))], 'refused: question 1\'s text is longer than 16384 characters'],
      ];
      for (const [questions, message] of cases) {
        // Through a caller that would answer it: the refusal comes before anyone holds the question.
        const result = await t.root.invoke('mid', plan({ answering: [{ id: 'a', answer: 'x' }], then: { delegate: { to: 'asker', prompt: { ask: questions } } } }));
        const inner = JSON.parse(result.response) as { success: boolean; error: string };
        assert.equal(inner.success, false);
        assert.equal(inner.error, message);
      }
      assert.equal(asked, 0);
    } finally {
      await t.close();
    }
  });
});
