/**
 * A hostile worker for test/broker/hostile-memory.test.ts: its task text is JSON
 * `{to, prompt, count, rosterSize}`; it invokes `to` `count` times, one after the other, each with a
 * spawn context whose roster names `to` `rosterSize` times (a roster may repeat a name: each one is
 * on its caller's roster), and answers with how many calls completed.
 */
import { connectWorker, serveOneTask } from '../../../main/worker/index.js';

const { session } = await connectWorker({ name: 'hostile-roster', description: 'repeats a name in its callees’ rosters', version: '1.0.0', skills: [] });
await serveOneTask(session, async (task, events) => {
  const { to, prompt, count, rosterSize } = JSON.parse(task.params.text) as { to: string; prompt: string; count: number; rosterSize: number };
  const roster = new Array<string>(rosterSize).fill(to);
  let completed = 0;
  for (let i = 0; i < count; i++) {
    const result = await session.invokeAgent(to, prompt, { spawnContext: { ...task.params.spawnContext, roster } });
    if (result.success) completed++;
    else events.status('working', `call ${i}: ${result.error ?? 'failed'}`);
  }
  events.artifact(String(completed), true);
  return { state: 'completed' };
});
session.close();
