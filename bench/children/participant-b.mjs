// bench/broker's participant B (long-lived, raw wire v3): says hello, then answers every task.run at
// once with an artifact `pong` and the completed result, in one write. The bench also runs one
// whose frames it routes itself.
import { Socket } from 'node:net';

const fd3 = new Socket({ fd: 3, readable: true, writable: true });
fd3.on('error', () => process.exit(1));
fd3.on('close', () => process.exit(0));
fd3.write('{"v":3,"id":1,"method":"session.hello","params":{"card":{"name":"b","description":"bench","version":"1","skills":[]}}}\n');

let buffered = '';
fd3.on('data', (chunk) => {
  buffered += chunk.toString('utf8');
  let nl;
  while ((nl = buffered.indexOf('\n')) >= 0) {
    const frame = JSON.parse(buffered.slice(0, nl));
    buffered = buffered.slice(nl + 1);
    if (frame.method !== 'task.run') continue;
    fd3.write(
      `{"v":3,"method":"task.event","params":{"kind":"artifact","id":${frame.id},"text":"pong","lastChunk":true}}\n` +
        `{"v":3,"id":${frame.id},"result":{"state":"completed"}}\n`,
    );
  }
});
