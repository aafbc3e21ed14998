/**
 * A stopping gateway closed its server first (Node unlinks gateway.sock: a successor may bind),
 * then asked whether gateway.token still held its token and removed the path: a successor that
 * started between the check and the removal (its writeTokenFile: rm, then create) lost its token
 * file, and served with no bridge or LLM worker able to find it ("no gateway is running").
 * Now the token goes while our socket is still bound, when no successor can have written one.
 *
 * The moment is the stopping gateway's rmSync of the token path (a hook on node:fs): a real
 * successor ProtocolGateway, in a process of its own, is started then, and the hook waits until it
 * has either written its token (the old order's race) or been refused (our socket still held).
 * A refused successor tries again once the stop has ended; it must then hold its own token file.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const GATEWAY_MODULE = new URL('../../main/gateway/index.ts', import.meta.url).pathname;
const CWD = new URL('../..', import.meta.url).pathname;

test('a successor started while the stopping gateway removes its token keeps its own token file', { timeout: 180_000 }, () => {
  const scratch = mkdtempSync(join(tmpdir(), 'gw-stop-token-'));
  try {
    const dir = join(scratch, 'run');
    const status = join(scratch, 'successor-status');
    // The successor: one start; if refused, says so and starts again when told on stdin.
    const successorScript = `
      import { writeFileSync } from 'node:fs';
      import { ProtocolGateway } from ${JSON.stringify(GATEWAY_MODULE)};
      const say = (s) => writeFileSync(${JSON.stringify(status)}, s);
      const tryStart = () => new ProtocolGateway({ list: () => [] }, { runtimeDir: ${JSON.stringify(dir)} }).start();
      try { await tryStart(); say('started'); }
      catch {
        say('refused');
        await new Promise((resolve) => process.stdin.once('data', resolve));
        await tryStart(); say('started');
      }
      setInterval(() => {}, 60_000);`;
    const script = `
      import fs from 'node:fs';
      import { spawn } from 'node:child_process';
      import { syncBuiltinESMExports } from 'node:module';
      import { join } from 'node:path';
      import { ProtocolGateway } from ${JSON.stringify(GATEWAY_MODULE)};
      const gateway = new ProtocolGateway({ list: () => [] }, { runtimeDir: ${JSON.stringify(dir)} });
      await gateway.start();
      const tokenPath = join(${JSON.stringify(dir)}, 'gateway.token');
      const ours = fs.readFileSync(tokenPath, 'utf8');
      const statusNow = () => { try { return fs.readFileSync(${JSON.stringify(status)}, 'utf8'); } catch { return ''; } };
      const hang = new Int32Array(new SharedArrayBuffer(4));
      const waitFor = (done) => { const until = Date.now() + 120_000; while (!done() && Date.now() < until) Atomics.wait(hang, 0, 0, 50); return done(); };
      let successor;
      const rmOriginal = fs.rmSync;
      fs.rmSync = function (path, ...rest) {
        if (path === tokenPath && successor === undefined) {
          successor = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', ${JSON.stringify(successorScript)}], { cwd: ${JSON.stringify(CWD)}, stdio: ['pipe', 'inherit', 'inherit'] });
          const tokenNow = () => { try { return fs.readFileSync(tokenPath, 'utf8'); } catch { return ''; } };
          if (!waitFor(() => (tokenNow() !== '' && tokenNow() !== ours) || statusNow() === 'refused')) console.log('the successor neither started nor was refused');
          console.log('at the removal: successor ' + (statusNow() || 'starting'));
        }
        return rmOriginal.call(this, path, ...rest);
      };
      syncBuiltinESMExports();
      await gateway.stop();
      fs.rmSync = rmOriginal;
      syncBuiltinESMExports();
      if (statusNow() === 'refused') { successor.stdin.write('again\\n'); waitFor(() => statusNow() === 'started'); }
      console.log('successor: ' + (statusNow() || 'never spawned'));
      const left = fs.existsSync(tokenPath) ? fs.readFileSync(tokenPath, 'utf8') : undefined;
      console.log(left === undefined ? 'token file: gone' : left === ours ? 'token file: still ours' : "token file: the successor's");
      successor?.kill('SIGKILL');
      process.exit(0);`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 170_000, cwd: CWD });
    assert.match(child.stdout, /successor: started/, `${child.stdout}\n${child.stderr.slice(0, 800)}`);
    assert.match(child.stdout, /token file: the successor's/, `the running successor's token file was removed by the stopping gateway:\n${child.stdout}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
