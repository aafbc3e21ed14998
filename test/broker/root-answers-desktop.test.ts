/**
 * The root's answers are held to what the asker's wire may carry (RootTransport.onQuestion,
 * `checkRelayedAnswers`: 16 K characters and 64 KiB each, 256 KiB an ask). The desktop's answer
 * channel counts characters: it said `{ accepted: true }` to 16 K control characters (96 KiB on the
 * wire), the popover closed, and the broker then failed the asker out of the person's sight. Now
 * the bridge host holds the answers to the same rule before it accepts them: refused, the page says
 * why and the question keeps waiting. A real gateway and bridge host, the broker tests' agent.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EVENT_CHANNELS, INVOKE_CHANNELS, type PendingQuestion, type TaskUpdate } from '../../main/app/bridge/contract.js';
import { planGateway, recordingHost, top } from '../app/bridge-fixture.js';
import { plan, until } from './helpers.js';

test("an answer from the page past what the asker's wire may carry is refused by the bridge, the question still waiting for a fitting one", { timeout: 180_000 }, async () => {
  const gw = await planGateway();
  const { host, attach, seen } = recordingHost(gw);
  attach();
  try {
    const { taskId } = (await host.handle(INVOKE_CHANNELS.startTask, top, { agent: 'agent', prompt: plan({ ask: [{ id: 'why', question: 'Why?' }] }) })) as { taskId: string };
    await until(() => seen<PendingQuestion>(EVENT_CHANNELS.question, () => true) !== undefined, 'the question');
    const question = seen<PendingQuestion>(EVENT_CHANNELS.question, () => true)!;
    const answer = (text: string) => host.handle(INVOKE_CHANNELS.answerQuestion, top, { requestId: question.requestId, answers: [{ id: 'why', answer: text, custom: true }] });
    // 16 K characters (the channel's limit), 96 KiB on the asker's wire. Before: { accepted: true }, then the asker failed.
    await assert.rejects(answer('\u0001'.repeat(16 * 1024)), /answer 1 is 98306 bytes on the wire, more than 65536: answer more briefly/);
    assert.deepEqual(await answer('because'), { accepted: true });
    await until(() => seen<TaskUpdate>(EVENT_CHANNELS.task, (u) => u.type === 'ended' && u.taskId === taskId) !== undefined, 'the task ended');
    const ended = seen<TaskUpdate>(EVENT_CHANNELS.task, (u) => u.type === 'ended' && u.taskId === taskId)!;
    assert.equal(ended.type === 'ended' ? ended.state : 'running', 'completed', JSON.stringify(ended));
  } finally {
    host.close();
    await gw.close();
  }
});
