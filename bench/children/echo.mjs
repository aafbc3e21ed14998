// bench/broker's ping-pong measured in the bench process: writes every line it reads on its fd-3
// socketpair straight back (parsed first, as B parses its task.run).
import { Socket } from 'node:net';

const fd3 = new Socket({ fd: 3, readable: true, writable: true });
fd3.on('error', () => process.exit(1));
fd3.on('close', () => process.exit(0));

let buffered = '';
fd3.on('data', (chunk) => {
  buffered += chunk.toString('utf8');
  let nl;
  while ((nl = buffered.indexOf('\n')) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    JSON.parse(line);
    fd3.write(`${line}\n`);
  }
});
