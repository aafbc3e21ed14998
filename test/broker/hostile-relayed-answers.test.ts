/**
 * Answers relayed to a worker that asked and stopped reading. A question climbs to its asker's
 * caller, a worker, whose answer the broker hands to the asker: what a worker may answer is held to
 * what a person may (the desktop's answer channel: one answer per question asked, 16 K characters
 * each), so the answers waiting for a non-reading asker stay small. Real children on real
 * socketpairs (children/agent.ts answering, children/deaf-asker.ts asking).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ParticipantConnection } from '../../main/fabric/index.js';
import { OUTBOUND_QUEUE_BYTES } from '../../main/fabric/limits/constants.js';
import { QUESTION_LIMITS } from '../../main/broker/index.js';
import { checkRelayedAnswers } from '../../main/broker/question-limits.js';
import { plan, ProgressLog, startBroker, until } from './helpers.js';

const DEAF_ASKER = fileURLToPath(new URL('./children/deaf-asker.ts', import.meta.url));
const MIB = 1024 * 1024;

/**
 * A relay that answers every question of its deaf callee's 4 asks (`questionsPerAsk` each) with
 * `answers`; once the broker has dealt with all four, asserts what waits in the asker's queue is
 * within its bound (the queue's own bytes and 1 MiB).
 */
async function deafAskerHoldsLittle(questionsPerAsk: number, answers: unknown): Promise<void> {
  const t = startBroker(['relay']);
  t.broker.addVirtualAgent('asker', t.runner({ args: ['--import', 'tsx', DEAF_ASKER, String(questionsPerAsk)] }));
  const controller = new AbortController();
  const log = new ProgressLog();
  try {
    const call = t.root.invoke('relay', plan({ answering: answers, then: { delegate: { to: 'asker', prompt: { echo: 'x' } } } }), { onProgress: (e) => log.push(e), signal: controller.signal });
    call.catch(() => {});
    await until(() => t.broker.registry.get('asker-0') !== undefined, "the asker's worker");
    const asker = t.broker.registry.get('asker-0')!.connection as ParticipantConnection;
    const pending = (t.broker.human as unknown as { questions: Map<string, number> }).questions;
    const asked = (): number => log.events.filter((e) => 'Step' in e && e.Step.includes('was asked by asker-0')).length;
    const bound = OUTBOUND_QUEUE_BYTES + MIB;
    // All four asks answered by the relay and dealt with by the broker (none pending).
    await until(() => asked() === 4 && !pending.has('asker-0'), 'the four asks dealt with');
    assert.ok(asker.outbound.heldBytes <= bound, `the deaf asker's queue holds ${(asker.outbound.heldBytes / MIB).toFixed(1)} MiB (${asker.outbound.waiters} answers waiting)`);
  } finally {
    controller.abort();
    await t.close();
  }
}

test("a caller answering its callee's 4 questions with 6 MiB each while the callee has stopped reading: the answers are refused, none waits in the broker", { timeout: 180_000 }, async () => {
  await deafAskerHoldsLittle(1, [{ id: 'q1', answer: 'a'.repeat(6 * MIB) }]);
});

test("a caller answering its deaf callee's 4 asks of 64 questions with 16 K control characters each (6 bytes each on the wire): refused by their encoded size, nothing past the bound waits", { timeout: 180_000 }, async () => {
  // 16 K characters each, within answerChars, but "\u0001" escaped: 96 KiB each, 6 MiB an ask.
  // Before: 18 MiB, 3 answers waiting.
  await deafAskerHoldsLittle(64, Array.from({ length: 64 }, (_, k) => ({ id: 'q' + (k + 1), answer: '\u0001'.repeat(16 * 1024) })));
});

test("a caller's answer is held to what a person may answer: one per question asked, 16 K characters each; the asker is told why it was refused", { timeout: 180_000 }, async () => {
  const t = startBroker(['relay', 'asker']);
  try {
    const ask = { ask: [{ id: 'q1', question: 'Which?' }, { id: 'q2', question: 'Where?' }] };
    const cases: [unknown, string | undefined][] = [
      [[{ id: 'q2', answer: 'here' }, { id: 'q1', answer: 'x'.repeat(16 * 1024) }], undefined],
      [[{ id: 'q3', answer: 'x' }], `relay-N's answer was refused: answer 1 names "q3", which was not asked`],
      [[{ id: 'q1', answer: 'a' }, { id: 'q1', answer: 'b' }], `relay-N's answer was refused: answer 2 answers "q1" a second time`],
      [[{ id: 'q1', answer: 'x'.repeat(16 * 1024 + 1) }], `relay-N's answer was refused: answer 1 is longer than 16384 characters`],
      [[{ id: 'q1', answer: '\u0001'.repeat(16 * 1024) }], `relay-N's answer was refused: answer 1 is 98306 bytes on the wire, more than 65536`],
    ];
    for (const [answers, error] of cases) {
      const result = await t.root.invoke('relay', plan({ answering: answers, then: { delegate: { to: 'asker', prompt: ask } } }));
      const inner = JSON.parse(result.response) as { success: boolean; error?: string };
      assert.equal(inner.error?.replace(/^relay-\d+/, 'relay-N'), error, JSON.stringify(answers).slice(0, 80));
      assert.equal(inner.success, error === undefined);
    }
  } finally {
    await t.close();
  }
});

test('all the answers to one ask are held to QUESTION_LIMITS.answersBytes on the wire, each within its own limit or not', () => {
  const questions = Array.from({ length: 5 }, (_, k) => ({ id: 'q' + (k + 1), question: 'Which?', options: [] }));
  // 5 answers of 16 K three-byte characters: 48 KiB each, within answerBytes; 240 KiB together plus the JSON around them.
  const answer = (n: number): { id: string; answer: string; custom: boolean }[] => questions.slice(0, n).map((q) => ({ id: q.id, answer: '\u20ac'.repeat(16 * 1024), custom: false }));
  assert.equal(checkRelayedAnswers(questions, answer(5)), undefined);
  const six = [...questions, { id: 'q6', question: 'Which?', options: [] }];
  const over = [...answer(5), { id: 'q6', answer: '\u20ac'.repeat(6 * 1024), custom: false }];
  assert.match(checkRelayedAnswers(six, over) ?? '', /^the answers are \d+ bytes on the wire, more than 262144$/);
  assert.equal(QUESTION_LIMITS.answersBytes, 256 * 1024);
});

test("the root answering a deaf asker's 4 asks of 64 questions with 16 K control characters each (the desktop's answer channel counts characters): refused by their encoded size, nothing past the bound waits", { timeout: 180_000 }, async () => {
  const t = startBroker([]);
  t.broker.addVirtualAgent('asker', t.runner({ args: ['--import', 'tsx', DEAF_ASKER, '64'] }));
  let asked = 0;
  const off = t.root.onQuestion((request) => {
    asked++;
    return request.questions.map((q) => ({ id: q.id, answer: '\u0001'.repeat(16 * 1024) }));
  });
  const controller = new AbortController();
  try {
    const call = t.root.invoke('asker', 'x', { signal: controller.signal });
    call.catch(() => {});
    await until(() => t.broker.registry.get('asker-0') !== undefined, "the asker's worker");
    const asker = t.broker.registry.get('asker-0')!.connection as ParticipantConnection;
    const pending = (t.broker.human as unknown as { questions: Map<string, number> }).questions;
    // Before: 18 MiB waited for the asker, 3 answers.
    await until(() => asked === 4 && !pending.has('asker-0'), 'the four asks dealt with');
    assert.ok(asker.outbound.heldBytes <= OUTBOUND_QUEUE_BYTES + MIB, `the deaf asker's queue holds ${(asker.outbound.heldBytes / MIB).toFixed(1)} MiB (${asker.outbound.waiters} answers waiting)`);
  } finally {
    off();
    controller.abort();
    await t.close();
  }
});

test("the root's answer is held to what a person may answer, as a caller's is; the asker is told why it was refused", { timeout: 180_000 }, async () => {
  const t = startBroker(['asker']);
  let answers: { id: string; answer: string }[] = [];
  const off = t.root.onQuestion(() => answers);
  try {
    const ask = { ask: [{ id: 'q1', question: 'Which?' }, { id: 'q2', question: 'Where?' }] };
    const cases: [{ id: string; answer: string }[], string | undefined][] = [
      [[{ id: 'q2', answer: 'here' }, { id: 'q1', answer: '\u20ac'.repeat(16 * 1024) }], undefined],
      [[{ id: 'q3', answer: 'x' }], `the root's answer was refused: answer 1 names "q3", which was not asked`],
      [[{ id: 'q1', answer: 'x'.repeat(16 * 1024 + 1) }], `the root's answer was refused: answer 1 is longer than 16384 characters`],
      [[{ id: 'q1', answer: '\u0001'.repeat(16 * 1024) }], `the root's answer was refused: answer 1 is 98306 bytes on the wire, more than 65536`],
    ];
    for (const [given, error] of cases) {
      answers = given;
      const result = await t.root.invoke('asker', plan(ask));
      assert.equal(result.success, error === undefined, `${JSON.stringify(given).slice(0, 80)}: ${result.error}`);
      if (error !== undefined) assert.ok(result.response.includes(error) || result.error?.includes(error), `${result.response} / ${result.error}`);
    }
  } finally {
    off();
    await t.close();
  }
});
