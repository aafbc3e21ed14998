// bench/broker's peer for participant A, measured the same way in the same kind of process: for
// each `run N` line on its stdin, N sequential one-line pings over its fd-3 socketpair to the bench
// process (which writes each line straight back), each timed from the write to reading the line
// back (parsed, as A parses its results); one line to stdout with the microseconds of each.
import { Socket } from 'node:net';

const fd3 = new Socket({ fd: 3, readable: true, writable: true });
fd3.on('error', () => process.exit(1));
fd3.on('close', () => process.exit(0));

let nextId = 2;
let waiting;
let buffered = '';
fd3.on('data', (chunk) => {
  buffered += chunk.toString('utf8');
  let nl;
  while ((nl = buffered.indexOf('\n')) >= 0) {
    const frame = JSON.parse(buffered.slice(0, nl));
    buffered = buffered.slice(nl + 1);
    waiting?.(frame);
  }
});

function ping() {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    waiting = (frame) => {
      waiting = undefined;
      if (frame.id !== id) reject(new Error(JSON.stringify(frame)));
      else resolve();
    };
    fd3.write(`{"v":3,"id":${id},"method":"agent.invoke","params":{"agent":"b-0","prompt":"ping"}}\n`);
  });
}

async function run(n) {
  const samples = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await ping();
    samples.push(Math.round((performance.now() - t0) * 1000));
  }
  return samples;
}

let commands = '';
process.stdin.on('data', async (chunk) => {
  commands += chunk.toString('utf8');
  let nl;
  while ((nl = commands.indexOf('\n')) >= 0) {
    const n = Number(commands.slice(0, nl).split(' ')[1]);
    commands = commands.slice(nl + 1);
    try {
      process.stdout.write(`${JSON.stringify({ samples: await run(n) })}\n`);
    } catch (err) {
      process.stdout.write(`${JSON.stringify({ error: String(err?.message ?? err) })}\n`);
    }
  }
});
