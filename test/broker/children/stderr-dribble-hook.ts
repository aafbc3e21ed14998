/**
 * A git hook's body for test/broker/hostile-git-output.test.ts (run from the hook a test plants,
 * as a worker could): writes argv[2] bytes to its stderr, git's own (a hook's stdout goes there
 * too), one byte per write, pausing a few microseconds between writes so that the broker reads
 * them one by one. Then it creates argv[3] and waits until argv[4] exists.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { writeAll } from '../../fabric/children/write-all.js';

const [count, marker, release] = [Number(process.argv[2]), process.argv[3]!, process.argv[4]!];
const x = Buffer.from('x');
for (let sent = 0; sent < count; sent++) {
  writeAll(2, x);
  // A few microseconds (spun: a timer is far longer) for the broker to read the byte alone.
  for (const until = performance.now() + 0.03; performance.now() < until; );
}
writeFileSync(marker, 'written');
const wait = setInterval(() => {
  if (existsSync(release)) clearInterval(wait);
}, 20);
