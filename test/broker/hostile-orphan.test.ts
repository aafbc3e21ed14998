/**
 * A task worker that exits while a process of its own (out of its process group) still holds its
 * connection: the broker sees no end of the socket, but the worker is gone. Its task must end and
 * its slot be freed, not wait for ever on a process the broker never started. Real children
 * (children/orphan-holder.ts, children/agent.ts) on real socketpairs.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LocalRunner } from '../../main/broker/runners/index.js';
import { isAlive, plan, startBroker, within } from './helpers.js';

const ORPHAN = fileURLToPath(new URL('./children/orphan-holder.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'chatty-orphan-'));
const holders: string[] = [];
after(() => {
  for (const file of holders) {
    try {
      process.kill(Number(readFileSync(file, 'utf8')), 'SIGKILL');
    } catch {
      // gone already, or never started
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

function orphanRunner(name: string, ...extra: string[]): LocalRunner {
  const pidFile = join(dir, `${name}.pid`);
  holders.push(pidFile);
  return new LocalRunner({ command: process.execPath, args: ['--import', 'tsx', ORPHAN, pidFile, ...extra], reapGraceMs: 500 });
}

test("a task worker that exits while a process of its own holds its connection: its task fails naming the exit, and its slot is free again", async () => {
  const t = startBroker(['echo'], { maxWorkers: 1 });
  t.broker.addVirtualAgent('orphan', orphanRunner('orphan'), { description: 'orphan' });
  try {
    const result = await within(t.root.invoke('orphan', 'go'), 10_000, "the orphaned worker's task");
    assert.equal(result.success, false);
    assert.match(result.error ?? '', /process exited/);
    // Its holder still lives (the broker never started it), but the one worker slot is free.
    assert.equal(isAlive(Number(readFileSync(join(dir, 'orphan.pid'), 'utf8'))), true);
    const next = await within(t.root.invoke('echo', plan({ echo: 'after' })), 10_000, 'the next task');
    assert.equal(next.response, 'after', next.error);
  } finally {
    await t.close();
  }
});

test('a task worker that answers and then exits leaving a process on its connection: its outcome stands', async () => {
  const t = startBroker([]);
  t.broker.addVirtualAgent('honest', orphanRunner('honest', 'answer'), { description: 'honest' });
  try {
    const result = await within(t.root.invoke('honest', 'go'), 10_000, "the worker's task");
    assert.equal(result.success, true, result.error);
    assert.equal(result.response, 'done');
  } finally {
    await t.close();
  }
});

test("an orphaned task worker that left its own calls' answers unread: its task still fails and its slot is free (the pause for its own answers does not put the close off)", async () => {
  const t = startBroker(['echo'], { maxWorkers: 1 });
  t.broker.addVirtualAgent('talker', orphanRunner('talker', 'calls', '600'), { description: 'talker' });
  try {
    const result = await within(t.root.invoke('talker', 'go'), 10_000, "the orphaned worker's task");
    assert.equal(result.success, false);
    assert.match(result.error ?? '', /process exited/);
    const next = await within(t.root.invoke('echo', plan({ echo: 'after' })), 10_000, 'the next task');
    assert.equal(next.response, 'after', next.error);
  } finally {
    await t.close();
  }
});
