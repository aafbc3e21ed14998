/**
 * A raw task worker for the broker tests: says hello, and once its task.run comes asks
 * CHATTY_TEST_ASKS (default 4) questions in one write, then never reads again, so the answers
 * relayed to it wait in the broker's outbound queue.
 */
import { Socket } from 'node:net';

const socket = new Socket({ fd: 3, readable: true, writable: true });
const frame = (id: number, method: string, params: unknown): string => JSON.stringify({ v: 3, id, method, params }) + '\n';
socket.write(frame(1, 'session.hello', { card: { name: 'deaf-asker', description: 'asks, then stops reading', version: '1.0.0', skills: [] } }));
let seen = '';
const onData = (chunk: Buffer): void => {
  seen += chunk.toString('utf8');
  if (!seen.includes('"method":"task.run"')) return;
  socket.off('data', onData);
  socket.pause(); // the task.run is the last thing read
  const asks = Number(process.env['CHATTY_TEST_ASKS'] ?? '4');
  // argv[2] questions per ask (default 1), named q1, q2, …
  const questions = Number(process.argv[2] ?? '1');
  const question = { questions: Array.from({ length: questions }, (_, k) => ({ id: 'q' + (k + 1), question: 'Which database?', options: [] })) };
  socket.write(Array.from({ length: asks }, (_, i) => frame(2 + i, 'human.ask', question)).join(''));
};
socket.on('data', onData);
setInterval(() => {}, 1 << 30); // lives until it is ended
