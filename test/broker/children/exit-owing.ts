/**
 * A hostile long-lived participant for test/broker/hostile-fat-answers.test.ts: for each task.run
 * it streams argv[2] KiB of artifact text (64 KiB an event), which the broker keeps for the task's
 * caller; once argv[3] tasks have come it exits without answering any: the broker ends every one
 * of them at once, `failed` (its connection closed), each answer carrying its task's kept text.
 */
import { Socket } from 'node:net';
import { createInterface } from 'node:readline';

const fd3 = new Socket({ fd: 3, readable: true, writable: true });
fd3.on('error', () => {});
const kib = Number(process.argv[2]);
const expected = Number(process.argv[3]);
const piece = 'e'.repeat(64 * 1024);
fd3.write(`${JSON.stringify({ v: 3, id: 1, method: 'session.hello', params: { card: { name: 'leaver', description: 'leaves owing', version: '0', skills: [] } } })}\n`);
let tasks = 0;
createInterface({ input: fd3 }).on('line', (line) => {
  const frame = JSON.parse(line) as { id?: number; method?: string };
  if (frame.method !== 'task.run') return;
  if (++tasks === expected) process.exit(0);
  for (let sent = 0; sent < kib; sent += 64) fd3.write(`{"v":3,"method":"task.event","params":{"id":${frame.id},"kind":"artifact","text":"${piece}"}}\n`);
});
