/**
 * A raw participant for the broker tests: says hello, then sends calls that are refused
 * (`mailbox.post` to nobody) and never reads their answers, so the broker's outbound queue to it
 * fills up and stays full.
 */
import { Socket } from 'node:net';

const socket = new Socket({ fd: 3, readable: true, writable: true });
const frame = (id: number, method: string, params: unknown): string => JSON.stringify({ v: 3, id, method, params }) + '\n';
socket.write(frame(1, 'session.hello', { card: { name: 'flood', description: 'never reads', version: '1.0.0', skills: [] } }));
socket.once('data', () => {
  socket.pause(); // the hello's answer is the last thing read
  let calls = '';
  for (let id = 2; id < 6000; id++) calls += frame(id, 'mailbox.post', { to: 'nobody', text: 'x' });
  socket.write(calls);
});
setInterval(() => {}, 1 << 30); // lives until it is ended
