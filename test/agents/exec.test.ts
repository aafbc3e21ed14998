/** How an approved `exec` runs, on its own: one output stream, its bound, its timeout, its cancel (the whole process group). */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runCommand } from '../../main/agents/scripted/exec.js';
import { endsSoon, tempDir } from './helpers.js';

const dir = tempDir('chatty-exec-');
after(() => rmSync(dir, { recursive: true, force: true }));

test('runs with /bin/sh in the directory given; stdout and stderr as one stream, in order; the exit code', async () => {
  let output = '';
  const result = await runCommand('pwd; echo to-stderr >&2; exit 4', { cwd: dir, onOutput: (text) => (output += text) });
  assert.deepEqual(result, { code: 4, signal: null, droppedBytes: 0 });
  assert.equal(output, `${dir}\nto-stderr\n`);
});

test('output past the cap is read and counted, not handed on', async () => {
  let output = '';
  const result = await runCommand('head -c 10000 /dev/zero | tr "\\0" a', { cwd: dir, maxOutputBytes: 100, onOutput: (text) => (output += text) });
  assert.equal(result.code, 0);
  assert.equal(output, 'a'.repeat(100));
  assert.equal(result.droppedBytes, 9_900);
});

test('a cancel ends the command and what it started in the background', async () => {
  const pidFile = join(dir, 'bg.pid');
  const abort = new AbortController();
  const running = runCommand(`sleep 600 & echo $! > ${pidFile}; echo started; wait`, {
    cwd: dir,
    signal: abort.signal,
    onOutput: (text) => {
      if (text.includes('started')) abort.abort();
    },
  });
  const result = await running;
  assert.equal(result.ended, 'cancelled');
  assert.equal(result.signal, 'SIGTERM');
  assert.ok(await endsSoon(Number(readFileSync(pidFile, 'utf8'))));
});

test('the timeout ends it too', async () => {
  const result = await runCommand('sleep 600', { cwd: dir, timeoutMs: 100, onOutput: () => {} });
  assert.equal(result.ended, 'timeout');
  assert.equal(result.code, null);
});

test('a command that exits leaving something in the background: that is ended with it', async () => {
  const pidFile = join(dir, 'left.pid');
  const result = await runCommand(`sleep 600 >/dev/null 2>&1 & echo $! > ${pidFile}`, { cwd: dir, onOutput: () => {} });
  assert.equal(result.code, 0);
  // The group was sent SIGKILL when the shell exited.
  assert.ok(await endsSoon(Number(readFileSync(pidFile, 'utf8'))));
});
