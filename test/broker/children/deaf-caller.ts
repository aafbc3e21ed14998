/**
 * A raw participant for the broker tests: says hello, reads its answer, then makes one
 * `agent.invoke` (the JSON params in CHATTY_TEST_INVOKE, or in the file CHATTY_TEST_INVOKE_FILE names; CHATTY_TEST_INVOKE_COUNT of them, in one
 * write, when set; another method when CHATTY_TEST_METHOD names one, with no params when
 * CHATTY_TEST_INVOKE is unset) and never reads again, so whatever the broker sends it for those calls (their
 * progress, their results) waits in the broker's outbound queue.
 */
import { readFileSync } from 'node:fs';
import { Socket } from 'node:net';

const socket = new Socket({ fd: 3, readable: true, writable: true });
const frame = (id: number, method: string, params: unknown): string => JSON.stringify({ v: 3, id, method, ...(params === undefined ? {} : { params }) }) + '\n';
socket.write(frame(1, 'session.hello', { card: { name: 'deaf', description: 'stops reading', version: '1.0.0', skills: [] } }));
socket.once('data', () => {
  socket.pause(); // the hello's answer is the last thing read
  const file = process.env['CHATTY_TEST_INVOKE_FILE'];
  const given = process.env['CHATTY_TEST_INVOKE'] ?? (file === undefined ? undefined : readFileSync(file, 'utf8'));
  const params = given === undefined ? undefined : (JSON.parse(given) as unknown);
  const count = Number(process.env['CHATTY_TEST_INVOKE_COUNT'] ?? '1');
  const method = process.env['CHATTY_TEST_METHOD'] ?? 'agent.invoke';
  socket.write(Array.from({ length: count }, (_, i) => frame(2 + i, method, params)).join(''));
});
setInterval(() => {}, 1 << 30); // lives until it is ended
