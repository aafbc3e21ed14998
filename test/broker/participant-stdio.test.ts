/**
 * A long-lived participant's child may leave a background process holding the child's stdout and
 * stderr: once the child has exited the broker lets go of those pipes (as a runner does for a
 * virtual agent's worker), so a stopped gateway lets its process exit (issue 17, item 8).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startBroker } from './helpers.js';

const GATEWAY = fileURLToPath(new URL('./children/participant-gateway-exit.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'chatty-participant-stdio-'));
const pidFile = join(dir, 'background.pid');
const helloPidFile = join(dir, 'background-of-a-failed-hello.pid');
let gateway: ChildProcess | undefined;
after(() => {
  gateway?.kill('SIGKILL');
  // The background sleeps are the test's own leftovers: end them by their pids.
  for (const file of [pidFile, helloPidFile]) {
    if (!existsSync(file)) continue;
    try {
      process.kill(Number(readFileSync(file, 'utf8').trim()), 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

// The timeout only bounds a hang (the background sleep holds the pipes for 30 s); nothing is timed.
it('a stopped gateway\'s process exits although a long-lived participant\'s background process still holds the participant\'s stdout and stderr', { timeout: 20_000 }, async () => {
  const child = (gateway = spawn(process.execPath, ['--import', 'tsx', GATEWAY, pidFile], { stdio: ['ignore', 'pipe', 'inherit'] }));
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  assert.equal(out, 'stopped after a task that succeeded\n');
  assert.deepEqual([code, signal], [0, null]);
  const background = Number(readFileSync(pidFile, 'utf8').trim());
  assert.doesNotThrow(() => process.kill(background, 0), 'the background sleep still runs: it is not the gateway\'s to end');
});

it('a participant that exits without its hello, leaving a background process on its stdout and stderr, fails openParticipant without waiting for that process', { timeout: 20_000 }, async () => {
  const t = startBroker([]);
  try {
    await assert.rejects(
      t.broker.openParticipant('quitter', '/bin/sh', ['-c', 'sleep 30 0<&- 3>&- & echo $! > "$1"; echo "no model configured" >&2; exit 3', 'sh', helloPidFile]),
      /^Error: fabric: worker quitter-0 \(\/bin\/sh\) did not complete its hello: [^\n]*\n--- the end of its stderr ---\nno model configured$/,
    );
    assert.deepEqual(t.broker.listAgents(), []);
  } finally {
    await t.close();
  }
});
