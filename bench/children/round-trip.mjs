// bench/broker's second spawn reference: floor.mjs plus one round trip, the least a worker's life
// with a hello can be. Writes one hello-shaped line on its fd-3 socketpair, waits for the line the
// bench process writes back, then writes its timestamps (as trivial-worker.mjs reports them) and
// exits once they are written.
import { Socket } from 'node:net';

const at = () => performance.timeOrigin + performance.now();
const t = { origin: performance.timeOrigin, ready: at(), answered: 0 };
const fd3 = new Socket({ fd: 3, readable: true, writable: true });
fd3.on('error', () => process.exit(1));
fd3.write('{"v":3,"id":1,"method":"session.hello","params":{"card":{"name":"trivial","description":"bench","version":"1","skills":[]}}}\n');
fd3.once('data', () => {
  t.answered = at();
  fd3.write(`${JSON.stringify(t)}\n`, () => process.exit(0));
});
