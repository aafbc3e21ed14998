/**
 * A long-lived participant for test/broker/hostile-progress-cap.test.ts: for each task.run it
 * sends one artifact event whose line is exactly argv[2] bytes (the frame cap, newline excluded),
 * then `completed`.
 */
import { Socket } from 'node:net';
import { createInterface } from 'node:readline';

const fd3 = new Socket({ fd: 3, readable: true, writable: true });
fd3.on('error', () => {});
const cap = Number(process.argv[2]);
fd3.write(`${JSON.stringify({ v: 3, id: 1, method: 'session.hello', params: { card: { name: 'cap', description: 'events at the cap', version: '0', skills: [] } } })}\n`);
createInterface({ input: fd3 }).on('line', (line) => {
  const frame = JSON.parse(line) as { id?: number; method?: string };
  if (frame.method !== 'task.run') return;
  const head = `{"v":3,"method":"task.event","params":{"id":${frame.id},"kind":"artifact","text":"`;
  const tail = '"}}';
  fd3.write(`${head}${'e'.repeat(cap - head.length - tail.length)}${tail}\n`);
  fd3.write(`{"v":3,"id":${frame.id},"result":{"state":"completed"}}\n`);
});
