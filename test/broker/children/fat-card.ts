/**
 * A long-lived participant whose hello's card carries argv[2] MiB of description (the wire sets no
 * limit on a card), and which then does nothing: what it costs is what the broker copies of its card
 * into every `agent.list` answer (test/broker/hostile-fat-answers.test.ts).
 */
import { Socket } from 'node:net';

const fd3 = new Socket({ fd: 3, readable: true, writable: true });
fd3.on('error', () => {});
const description = 'c'.repeat(Number(process.argv[2]) * 1024 * 1024);
fd3.write(`${JSON.stringify({ v: 3, id: 1, method: 'session.hello', params: { card: { name: 'fat-card', description, version: '0', skills: [] } } })}\n`);
fd3.resume();
setInterval(() => {}, 1 << 30); // lives until it is ended
