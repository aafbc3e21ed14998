/**
 * A worker that does exactly what the test says, byte for byte: a misbehaving peer on demand.
 * argv[2] is a JSON array of lines written to fd 3 at start; with argv[3] `deaf` it never reads
 * fd 3 at all (not even its end). Then stdin carries one JSON command
 * per line:
 *   {"send": "<line>"}       write the line (plus newline) to fd 3
 *   {"sendHex": "<hex>"}     write these bytes as they are
 *   {"oversize": n}          write n bytes of 'x', then a newline
 *   {"pause": true}          stop reading fd 3 (answers {"paused": true})
 *   {"resume": true}         read fd 3 again
 *   {"answerTasks": true}    answer every task.run with {"state":"completed"}
 *   {"ping": k}              answers {"pong": k}
 * and stdout reports {"got": <frame>} for each line from the broker (or {"gotCount": n} every 50
 * lines when answering tasks) and {"ended": true} when fd 3 ends.
 */
import { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';

const fd3 = new Socket({ fd: 3, readable: true, writable: true });
const report = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);
let answerTasks = false;
let received = 0;

for (const line of JSON.parse(process.argv[2] ?? '[]') as string[]) fd3.write(`${line}\n`);

const deaf = process.argv[3] === 'deaf';
const lines = createInterface({ input: deaf ? new PassThrough() : fd3, crlfDelay: Infinity });
lines.on('line', (line) => {
  received++;
  const frame = JSON.parse(line) as { id?: number; method?: string };
  if (answerTasks && frame.method === 'task.run') {
    fd3.write(`${JSON.stringify({ v: 3, id: frame.id, result: { state: 'completed' } })}\n`);
    if (received % 50 === 0) report({ gotCount: received });
    return;
  }
  report({ got: frame });
});
// Reported on the end of fd 3 (the broker's FIN), in the same tick the socket starts closing its
// own end: the report is out before the broker can see this side close and reap the child.
if (!deaf) fd3.on('end', () => report({ ended: true }));
fd3.on('error', () => {});

createInterface({ input: process.stdin }).on('line', (line) => {
  const command = JSON.parse(line) as Record<string, unknown>;
  if (typeof command.send === 'string') fd3.write(`${command.send}\n`);
  if (typeof command.oversize === 'number') {
    const mib = Buffer.alloc(1024 * 1024, 'x');
    let left = command.oversize;
    while (left > 0) {
      fd3.write(left >= mib.length ? mib : mib.subarray(0, left));
      left -= mib.length;
    }
    fd3.write('\n');
  }
  if (typeof command.sendHex === 'string') fd3.write(Buffer.from(command.sendHex, 'hex'));
  if (command.pause) {
    lines.pause();
    report({ paused: true });
  }
  if (command.resume) lines.resume();
  if (command.answerTasks) answerTasks = true;
  if (command.ping !== undefined) report({ pong: command.ping });
});
process.stdin.on('end', () => process.exit(0));
