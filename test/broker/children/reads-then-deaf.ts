/**
 * A hostile caller for test/broker/hostile-fat-answers.test.ts: makes argv[2] agent.invoke calls
 * (params in CHATTY_TEST_INVOKE) in one write, reads their progress until argv[3] `Text` events
 * have come, then stops reading, writes the file argv[4] (the test's sign that all progress was
 * read) and makes one more call, the same: its callee (children/batch-outcomes.ts) answers every
 * task when that one comes, so every answer finds this caller deaf.
 */
import { writeFileSync } from 'node:fs';
import { Socket } from 'node:net';

const socket = new Socket({ fd: 3, readable: true, writable: true });
const frame = (id: number, method: string, params: unknown): string => JSON.stringify({ v: 3, id, method, params }) + '\n';
socket.write(frame(1, 'session.hello', { card: { name: 'deaf', description: 'stops reading later', version: '1.0.0', skills: [] } }));
const count = Number(process.argv[2]);
const texts = Number(process.argv[3]);
const params = JSON.parse(process.env['CHATTY_TEST_INVOKE']!) as unknown;
let seen = 0;
let tail = '';
let asked = false;
socket.on('data', (chunk: Buffer) => {
  if (!asked) {
    asked = true; // the first chunk is the hello's answer
    socket.write(Array.from({ length: count }, (_, i) => frame(2 + i, 'agent.invoke', params)).join(''));
    return;
  }
  const lines = (tail + chunk.toString('latin1')).split('\n');
  tail = lines.pop()!;
  for (const line of lines) if (line.includes('"Text":')) seen++;
  if (seen < texts) return;
  socket.pause();
  socket.removeAllListeners('data');
  writeFileSync(process.argv[4]!, 'deaf');
  socket.write(frame(2 + count, 'agent.invoke', params));
});
setInterval(() => {}, 1 << 30); // lives until it is ended
