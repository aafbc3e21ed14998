// Ctrl-C while `serve` is still building the bundled examples (its first start, up to half a
// minute) ends it at once, as Ctrl-C does: there is no socket or token yet to remove.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, test } from 'node:test';
import { exited, outsideAnyPackage, spawnCli } from '../helpers/cli.js';

const home = outsideAnyPackage();
after(() => home.remove());

test('SIGINT during the first build of the examples ends serve at once, leaving no socket or token', async () => {
  // A cache of its own, so the examples are built here and not found ready.
  const env = { ...process.env, XDG_CACHE_HOME: join(home.path, 'cache') };
  const runtimeDir = join(home.path, 'run');
  const child = spawnCli(['serve', '--json', '--runtime-dir', runtimeDir], env, home.path);
  for await (const line of createInterface({ input: child.stderr })) {
    if (line.includes('building example plugin')) break;
  }
  child.kill('SIGINT');
  assert.deepEqual(await exited(child), { code: null, signal: 'SIGINT' });
  assert.ok(!existsSync(join(runtimeDir, 'gateway.sock')));
  assert.ok(!existsSync(join(runtimeDir, 'gateway.token')));
});
