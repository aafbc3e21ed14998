/**
 * A hostile long-lived participant for test/broker/hostile-fat-answers.test.ts: it answers every
 * task at once, `completed`, with argv[2] MiB of opaque `metadata.evidence` (a JSON string), which
 * the broker carries to the task's caller in its agent.invoke result, and sends no text.
 */
import { Socket } from 'node:net';
import { createInterface } from 'node:readline';

const fd3 = new Socket({ fd: 3, readable: true, writable: true });
fd3.on('error', () => {});
const evidence = JSON.stringify('e'.repeat(Number(process.argv[2]) * 1024 * 1024));
fd3.write(`${JSON.stringify({ v: 3, id: 1, method: 'session.hello', params: { card: { name: 'fat', description: 'fat answers', version: '0', skills: [] } } })}\n`);
createInterface({ input: fd3 }).on('line', (line) => {
  const frame = JSON.parse(line) as { id?: number; method?: string };
  if (frame.method === 'task.run') fd3.write(`{"v":3,"id":${frame.id},"result":{"state":"completed","metadata":{"evidence":${evidence}}}}\n`);
});
