/**
 * One gateway building the bundled examples into a cache another may share
 * (`examples-finish-together.test.ts`): says `ready` once loaded, builds when the go file is
 * there, then says `ok` or `failed: <why>`. The build stands in for componentize-js.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureExamplesBuilt } from '../../main/plugins/build/index.js';

const [source, cacheDir, go] = process.argv.slice(2) as [string, string, string];
const build = async (dir: string): Promise<void> => writeFileSync(join(dir, 'plugin.wasm'), new Uint8Array([0, 0x61, 0x73, 0x6d]), { mode: 0o644 });

async function main(): Promise<void> {
  process.stdout.write('ready\n');
  // Spins on the event loop, not a timer: the three start their builds as close together as they can.
  while (!existsSync(go)) await new Promise((r) => setImmediate(r));
  try {
    await ensureExamplesBuilt(source, { cacheDir, build });
    process.stdout.write('ok\n');
  } catch (err) {
    process.stdout.write(`failed: ${(err as Error).message}\n`);
  }
}
void main();
