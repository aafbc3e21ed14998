/**
 * A gateway stopping asks whether `gateway.token` still holds its own token before removing it.
 * It stat'ed the path (a regular file of the token's size) and then read the path again: a fifo
 * put there between the two held the read, and the main thread with it, for ever. The swap is
 * timed by a hook on `node:fs` (the moment after the stat), in a child: a blocked thread cannot
 * be ended from inside.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { tempDir } from '../helpers/gateway.js';

test('a fifo swapped in for the token file while a stopping gateway checks it does not hold the stop', { timeout: 180_000 }, (t) => {
  const scratch = tempDir('chatty-stop-token-fifo-');
  t.after(() => scratch.remove());
  const gatewayModule = JSON.stringify(new URL('../../main/gateway/index.ts', import.meta.url).href);
  const script = `
    import fs from 'node:fs';
    import { syncBuiltinESMExports } from 'node:module';
    import { join } from 'node:path';
    import { spawnSync } from 'node:child_process';
    import { ProtocolGateway } from ${gatewayModule};
    const dir = join(${JSON.stringify(scratch.path)}, 'run');
    const gateway = new ProtocolGateway({ list: () => [] }, { runtimeDir: dir });
    await gateway.start();
    const tokenPath = join(dir, 'gateway.token');
    const statOf = fs.lstatSync;
    const swapAfter = (original) => function (path, ...rest) {
      const result = original.call(this, path, ...rest);
      if (path === tokenPath && result.isFile?.()) {
        fs.lstatSync = statOf;
        fs.statSync = statPath;
        syncBuiltinESMExports();
        fs.rmSync(tokenPath);
        spawnSync('mkfifo', ['-m', '600', tokenPath]);
      }
      return result;
    };
    const statPath = fs.statSync;
    fs.lstatSync = swapAfter(statOf);
    fs.statSync = swapAfter(statPath);
    syncBuiltinESMExports();
    await gateway.stop();
    console.log('stopped');`;
  // A hang guard: the old stop blocked on the fifo for ever; 90 s leaves a loaded machine time to start tsx.
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 90_000 });
  assert.equal(child.signal, null, `the stop returned (it was killed by ${child.signal}: blocked on the fifo)`);
  assert.match(child.stdout, /stopped/, child.stderr);
});
