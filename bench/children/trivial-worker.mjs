// bench/broker's trivial virtual-agent worker, raw wire v3 by hand (no library, no tsx: the same
// Node start-up as floor.mjs): session.hello, wait for its result, wait for the task.run, answer
// one artifact (the worker's own timestamps, for the bench's breakdown) and the completed result,
// exit once the result is written.
import { Socket } from 'node:net';

const at = () => performance.timeOrigin + performance.now();
const t = { origin: performance.timeOrigin, ready: at(), helloAnswered: 0, taskRun: 0 };
const fd3 = new Socket({ fd: 3, readable: true, writable: true });
fd3.on('error', () => process.exit(1));
fd3.write('{"v":3,"id":1,"method":"session.hello","params":{"card":{"name":"trivial","description":"bench","version":"1","skills":[]}}}\n');

let buffered = '';
fd3.on('data', (chunk) => {
  buffered += chunk.toString('utf8');
  let nl;
  while ((nl = buffered.indexOf('\n')) >= 0) {
    const frame = JSON.parse(buffered.slice(0, nl));
    buffered = buffered.slice(nl + 1);
    if (frame.id === 1 && 'result' in frame) t.helloAnswered = at();
    else if (frame.method === 'task.run') {
      t.taskRun = at();
      const id = frame.id;
      const text = JSON.stringify(JSON.stringify(t));
      fd3.write(
        `{"v":3,"method":"task.event","params":{"kind":"artifact","id":${id},"text":${text},"lastChunk":true}}\n` +
          `{"v":3,"id":${id},"result":{"state":"completed"}}\n`,
        () => process.exit(0),
      );
    }
  }
});
