/**
 * A worker that says hello, then writes one call whose params nest argv[2] arrays deep (no
 * `metadata` key, so not the opaque scan's line), then waits to be closed.
 */
import { writeAll } from './write-all.js';

const depth = Number(process.argv[2]);
const hello = { v: 3, id: 1, method: 'session.hello', params: { card: { name: 'deep', description: 'd', version: '0', skills: [] } } };
writeAll(3, Buffer.from(`${JSON.stringify(hello)}\n`));
writeAll(3, Buffer.from(`{"v":3,"id":2,"method":"agent.list","params":${'['.repeat(depth)}${']'.repeat(depth)}}\n`));
setInterval(() => {}, 1 << 30);
