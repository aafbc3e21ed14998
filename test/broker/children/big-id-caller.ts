/**
 * A caller for test/broker/hostile-progress-cap.test.ts: makes one agent.invoke (params in
 * CHATTY_TEST_INVOKE) under the id argv[2], written as given (any non-negative integer is a valid
 * id), and once it is answered writes to the file argv[3] the longest line the broker sent it, the
 * length of the progress text it got and the start of the answer.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { createInterface } from 'node:readline';

const socket = new Socket({ fd: 3, readable: true, writable: true });
const frame = (id: string, method: string, params: unknown): string => `{"v":3,"id":${id},"method":"${method}","params":${JSON.stringify(params)}}\n`;
socket.write(frame('1', 'session.hello', { card: { name: 'caller', description: 'a big call id', version: '1.0.0', skills: [] } }));
let longest = 0;
let text = 0;
let asked = false;
createInterface({ input: socket }).on('line', (line) => {
  longest = Math.max(longest, Buffer.byteLength(line));
  if (!asked) {
    asked = true; // the hello's answer
    socket.write(frame(process.argv[2]!, 'agent.invoke', JSON.parse(process.env['CHATTY_TEST_INVOKE']!)));
    return;
  }
  const got = JSON.parse(line) as { method?: string; params?: { event?: { Text?: string } } };
  if (got.method === 'req.progress') text += got.params?.event?.Text?.length ?? 0;
  else {
    // Written aside, then renamed: the test waits for the name, and must never read it half written.
    writeFileSync(`${process.argv[3]!}.part`, JSON.stringify({ longest, text, answer: line.slice(0, 300) }));
    renameSync(`${process.argv[3]!}.part`, process.argv[3]!);
  }
});
setInterval(() => {}, 1 << 30); // lives until it is ended
