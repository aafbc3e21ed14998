// bench/broker's participant A (long-lived, raw wire v3): says hello, then for each `run N` line on
// its stdin makes N sequential agent.invoke calls to b-0 and writes one line to its stdout: the
// microseconds each call took, from writing its request to reading its result (the req.progress
// lines in between are read and skipped). The bench also runs one whose frames it routes itself.
import { Socket } from 'node:net';

const fd3 = new Socket({ fd: 3, readable: true, writable: true });
fd3.on('error', () => process.exit(1));
fd3.on('close', () => process.exit(0));
fd3.write('{"v":3,"id":1,"method":"session.hello","params":{"card":{"name":"a","description":"bench","version":"1","skills":[]}}}\n');

let nextId = 2;
let waiting; // (frame) => void, for the call in flight
let buffered = '';
fd3.on('data', (chunk) => {
  buffered += chunk.toString('utf8');
  let nl;
  while ((nl = buffered.indexOf('\n')) >= 0) {
    const frame = JSON.parse(buffered.slice(0, nl));
    buffered = buffered.slice(nl + 1);
    if (frame.method === undefined) waiting?.(frame); // a result or error; req.progress is skipped
  }
});

function call() {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    waiting = (frame) => {
      if (frame.id !== id) return;
      waiting = undefined;
      if (frame.error || frame.result.success !== true || frame.result.response !== 'pong') reject(new Error(JSON.stringify(frame)));
      else resolve();
    };
    fd3.write(`{"v":3,"id":${id},"method":"agent.invoke","params":{"agent":"b-0","prompt":"ping"}}\n`);
  });
}

async function run(n) {
  const samples = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call();
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
