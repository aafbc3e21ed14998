/**
 * A raw participant for the broker tests: says hello, reads its answer, then makes one
 * `agent.invoke` (the JSON params in CHATTY_TEST_INVOKE) and never reads again, so whatever the
 * broker sends it for that call (its progress, its result) waits in the broker's outbound queue.
 */
import { Socket } from 'node:net';

const socket = new Socket({ fd: 3, readable: true, writable: true });
const frame = (id: number, method: string, params: unknown): string => JSON.stringify({ v: 3, id, method, params }) + '\n';
socket.write(frame(1, 'session.hello', { card: { name: 'deaf', description: 'stops reading', version: '1.0.0', skills: [] } }));
socket.once('data', () => {
  socket.pause(); // the hello's answer is the last thing read
  socket.write(frame(2, 'agent.invoke', JSON.parse(process.env['CHATTY_TEST_INVOKE']!)));
});
setInterval(() => {}, 1 << 30); // lives until it is ended
