/**
 * A worker that says hello, then writes the start of a line one byte per write, pausing a few
 * microseconds between writes so that the broker reads them one by one, and never ends the line
 * (with argv[3] `stderr`, the bytes go to its stderr instead; with argv[3] `paced`, each byte after
 * a round's first waits for a byte on stdin, the test's word that the broker has read the one before:
 * every byte read alone, however loaded the machine).
 * argv[2] is how many bytes per round (argv[4], when given, for the first): after each round it
 * reports {"sent": <total>} on stdout and waits for a line on stdin before the next. Writes go straight to fd 3 (`writeSync`), so each
 * byte is its own write.
 */
import { readSync } from 'node:fs';
import { writeAll } from './write-all.js';

const round = Number(process.argv[2] ?? '0');
const toStderr = process.argv[3] === 'stderr';
const paced = process.argv[3] === 'paced';
const write = (bytes: Buffer, fd = 3): void => writeAll(fd, bytes);
write(Buffer.from(`${JSON.stringify({ v: 3, id: 1, method: 'session.hello', params: { card: { name: 'x', description: 'dribble', version: '0', skills: [] } } })}\n`));
const head = Buffer.from('{"v":3,"method":"task.event","params":{"id":1,"kind":"artifact","text":"');
const x = Buffer.from('x');
let sent = 0;
const stdin = Buffer.alloc(1);
/** One byte of stdin (0 at its end), retried on EAGAIN should fd 0 be non-blocking too. */
const readStdin = (): number => {
  for (;;) {
    try {
      return readSync(0, stdin);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
    }
  }
};
for (let first = true; ; first = false) {
  for (const start = sent, end = sent + (first && process.argv[4] ? Number(process.argv[4]) : round); sent < end; sent++) {
    // The word for a round's last byte is read with the go below: a round's first byte waits for none.
    if (paced && sent > start && readStdin() === 0) process.exit(0); // the broker has read the byte before
    if (toStderr) write(x, 2);
    else write(sent < head.length ? head.subarray(sent, sent + 1) : x);
    // A few microseconds (spun: a timer is far longer) for the broker to read the byte alone.
    if (!paced) for (const until = performance.now() + 0.03; performance.now() < until; );
  }
  process.stdout.write(`${JSON.stringify({ sent })}\n`);
  // Waits for the test's go (a line on stdin); its end ends the worker.
  do if (readStdin() === 0) process.exit(0);
  while (stdin[0] !== 0x0a);
}
