/**
 * A raw participant for test/broker/hostile-deaf-callee.test.ts: calls a participant that stopped
 * reading (sleepy-0) CALLS times with 1 MiB prompts in one write, then, once the file argv[2]
 * exists, cancels them all (req.cancel), and keeps reading. The file argv[3] gets one line per
 * answer (rewritten at each): the error's message for a refused call, else the result's `error`.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';

const go = process.argv[2]!;
const answered = process.argv[3]!;
const CALLS = 32;
const socket = new Socket({ fd: 3, readable: true, writable: true });
const frame = (f: unknown): string => JSON.stringify(f) + '\n';
socket.write(frame({ v: 3, id: 1, method: 'session.hello', params: { card: { name: 'canceller', description: 'cancels its calls', version: '1.0.0', skills: [] } } }));
let hello = false;
let rest = '';
const answers: string[] = [];
socket.on('data', (chunk: Buffer) => {
  rest += chunk.toString('utf8');
  let nl: number;
  while ((nl = rest.indexOf('\n')) >= 0) {
    const f = JSON.parse(rest.slice(0, nl)) as { id?: number; method?: string; result?: { error?: string }; error?: { message: string } };
    rest = rest.slice(nl + 1);
    if (!hello && f.id === 1) {
      hello = true;
      const prompt = 'p'.repeat(1024 * 1024);
      socket.write(Array.from({ length: CALLS }, (_, i) => frame({ v: 3, id: 2 + i, method: 'agent.invoke', params: { agent: 'sleepy-0', prompt } })).join(''));
      const poll = setInterval(() => {
        if (!existsSync(go)) return;
        clearInterval(poll);
        socket.write(Array.from({ length: CALLS }, (_, i) => frame({ v: 3, method: 'req.cancel', params: { id: 2 + i } })).join(''));
      }, 20);
    } else if (f.method === undefined && f.id !== undefined && f.id >= 2 && f.id < 2 + CALLS) {
      answers.push(f.error?.message ?? f.result?.error ?? 'completed');
      writeFileSync(answered, answers.join('\n'));
    }
  }
});
setInterval(() => {}, 1 << 30); // lives until it is ended
