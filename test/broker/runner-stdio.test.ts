/**
 * A worker's child may leave a background process holding the worker's stdout and stderr: once
 * the worker has exited, its runner lets go of those pipes, so a stopped gateway lets its process
 * exit (issue 17, item 8).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const GATEWAY = fileURLToPath(new URL('./children/runner-gateway-exit.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'chatty-runner-stdio-'));
const pidFile = join(dir, 'background.pid');
let gateway: ChildProcess | undefined;
after(() => {
  gateway?.kill('SIGKILL');
  // The background sleep is the test's own leftover: end it by its pid.
  if (existsSync(pidFile)) {
    try {
      process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

// The timeout only bounds a hang (the background sleep holds the pipes for 30 s); nothing is timed.
it('a stopped gateway\'s process exits although a worker\'s background process still holds the worker\'s stdout and stderr', { timeout: 20_000 }, async () => {
  const child = (gateway = spawn(process.execPath, ['--import', 'tsx', GATEWAY, pidFile], { stdio: ['ignore', 'pipe', 'inherit'] }));
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  assert.equal(out, 'stopped after a task that succeeded\n');
  assert.deepEqual([code, signal], [0, null]);
  const background = Number(readFileSync(pidFile, 'utf8').trim());
  assert.doesNotThrow(() => process.kill(background, 0), 'the background sleep still runs: it is not the gateway\'s to end');
});
