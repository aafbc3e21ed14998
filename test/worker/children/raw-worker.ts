/**
 * The scenario of `library-worker.ts scenario`, written by hand in raw NDJSON on fd 3 with no
 * library: hello, then for the task.run a step, two text chunks (the last one says so) and the
 * result, then end the connection.
 */
import { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { CARD } from './card.js';

const fd3 = new Socket({ fd: 3, readable: true, writable: true });
const send = (line: string) => fd3.write(`${line}\n`);

send(`{"v":3,"id":1,"method":"session.hello","params":{"card":${JSON.stringify(CARD)}}}`);
createInterface({ input: fd3 }).on('line', (line) => {
  const frame = JSON.parse(line) as { id?: number; method?: string };
  if (frame.method !== 'task.run') return;
  const id = frame.id!;
  send(`{"v":3,"method":"task.event","params":{"kind":"status","id":${id},"state":"working","message":"planning"}}`);
  send(`{"v":3,"method":"task.event","params":{"kind":"artifact","id":${id},"text":"Hello, ","lastChunk":false}}`);
  send(`{"v":3,"method":"task.event","params":{"kind":"artifact","id":${id},"text":"world","lastChunk":true}}`);
  send(`{"v":3,"id":${id},"result":{"state":"completed"}}`);
  fd3.end();
});
fd3.on('error', () => {});
