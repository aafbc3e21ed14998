/**
 * A question's answers as the page sends them: `custom: false` says the person chose one of the
 * options shown, and the asker may take it as such (a choice among its own words). The bridge
 * host checked only the ids, so a page (a compromised one, or a bug) could answer `custom: false`
 * with words that were no option, and the worker was told the person had chosen them. Now such an
 * answer is refused and the question keeps waiting. A real gateway, the bridge host, the broker
 * tests' agent as a real child.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { EVENT_CHANNELS, INVOKE_CHANNELS, type PendingQuestion, type TaskUpdate } from '../../main/app/bridge/contract.js';
import { plan, until } from '../broker/helpers.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { planGateway, recordingHost, top } from './bridge-fixture.js';

let gw: RunningGateway;

before(async () => {
  gw = await planGateway();
});

after(async () => {
  await gw?.close();
});

test('an answer marked as a chosen option (custom: false) must be one of that question\'s options; the question waits until a true answer', async () => {
  const { host, attach, seen } = recordingHost(gw);
  attach();
  try {
    const { taskId } = (await host.handle(INVOKE_CHANNELS.startTask, top, {
      agent: 'agent',
      prompt: plan({ ask: [{ id: 'keep', question: 'Keep the data?', options: ['Keep it', 'Archive it'] }, { id: 'why', question: 'Why?' }] }),
    })) as { taskId: string };
    await until(() => seen<PendingQuestion>(EVENT_CHANNELS.question, () => true) !== undefined, 'the question');
    const question = seen<PendingQuestion>(EVENT_CHANNELS.question, () => true)!;
    const answer = (answers: { id: string; answer: string; custom: boolean }[]) => host.handle(INVOKE_CHANNELS.answerQuestion, top, { requestId: question.requestId, answers });
    await assert.rejects(answer([{ id: 'keep', answer: 'Delete everything', custom: false }, { id: 'why', answer: 'x', custom: true }]), /not one of the options of keep/);
    await assert.rejects(answer([{ id: 'keep', answer: 'Keep it', custom: false }, { id: 'why', answer: 'x', custom: false }]), /not one of the options of why/, 'a question without options takes only custom answers');
    await assert.rejects(answer([{ id: 'keep', answer: 'keep it', custom: false }, { id: 'why', answer: 'x', custom: true }]), /not one of the options/, 'exactly an option, case included');
    // The question still waits: an option chosen, or the person's own words, answer it.
    assert.deepEqual(await answer([{ id: 'keep', answer: 'Archive it', custom: false }, { id: 'why', answer: 'Delete everything', custom: true }]), { accepted: true });
    await until(() => seen<TaskUpdate>(EVENT_CHANNELS.task, (u) => u.type === 'ended' && u.taskId === taskId) !== undefined, 'the task ended');
  } finally {
    host.close();
  }
});
