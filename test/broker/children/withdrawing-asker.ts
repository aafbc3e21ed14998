/**
 * A raw long-lived participant for test/broker/hostile-deaf-callee.test.ts: on its task it asks a
 * question of about 1 MiB (64 questions of 16 K characters), withdraws it (`req.cancel`) at once,
 * waits for its answer (the `cancelled` error), and does so `argv[2]` times, then completes the
 * task and writes `argv[3]`. Its questions climb to its caller first.
 */
import { writeFileSync } from 'node:fs';
import { Socket } from 'node:net';

const times = Number(process.argv[2]);
const marker = process.argv[3]!;
const socket = new Socket({ fd: 3, readable: true, writable: true });
const send = (frame: unknown): void => void socket.write(JSON.stringify(frame) + '\n');
const questions = Array.from({ length: 64 }, (_, i) => ({ id: `q${i}`, question: 'q'.repeat(16 * 1024), options: [] }));
let asked = 0;
let taskId = 0;
const ask = (): void => {
  const id = 100 + ++asked;
  send({ v: 3, id, method: 'human.ask', params: { questions } });
  send({ v: 3, method: 'req.cancel', params: { id } });
};
let rest = '';
socket.on('data', (chunk: Buffer) => {
  rest += chunk.toString('utf8');
  let nl: number;
  while ((nl = rest.indexOf('\n')) >= 0) {
    const frame = JSON.parse(rest.slice(0, nl)) as { id?: number; method?: string; error?: unknown };
    rest = rest.slice(nl + 1);
    if (frame.method === 'task.run') {
      taskId = frame.id!;
      ask();
    } else if (frame.id !== undefined && frame.id > 100 && frame.error !== undefined) {
      if (asked < times) ask();
      else {
        send({ v: 3, id: taskId, result: { state: 'completed' } });
        writeFileSync(marker, 'done');
      }
    }
  }
});
send({ v: 3, id: 1, method: 'session.hello', params: { card: { name: 'asker', description: 'asks and withdraws', version: '1.0.0', skills: [] } } });
setInterval(() => {}, 1 << 30); // lives until it is ended
