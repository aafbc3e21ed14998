/**
 * The desktop bridge (main/app/bridge/bridge-host.ts) learns a task's deeper nodes from its
 * workers' steps (`<node>: <callee> started`, a scripted agent's relay). A step is a worker's
 * words: one naming 40,000 nodes (0.4 MB) held the app's main thread 3.3 s (each name added as a
 * node, each add looking through every node before it) and sent the window 40,001 events. Now a
 * step names at most the chain the broker's delegation depth allows, and a task's tree holds at
 * most MAX_NODES_PER_TASK nodes, then says once that it draws no more. A real gateway, the bridge
 * host, a real hostile worker (children/hostile-step.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { MAX_DELEGATION_DEPTH } from '../../main/broker/index.js';
import { LocalRunner } from '../../main/broker/runners/index.js';
import { EVENT_CHANNELS, INVOKE_CHANNELS, MAX_NAME_CHARS, type TaskNode, type TaskState, type TaskUpdate, type TaskView } from '../../main/app/bridge/contract.js';
import { MAX_ERROR_CHARS, MAX_TEXT_PER_TASK } from '../../main/app/bridge/kept-text.js';
import { MAX_NODES_PER_TASK } from '../../main/app/bridge/task-tree.js';
import { until } from './helpers.js';
import { cpuDuring } from '../helpers/cpu-meter.js';
import { recordingHost, top } from '../app/bridge-fixture.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';

let gw: RunningGateway;
let scratch: string;

before(async () => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-bridge-steps-')));
  gw = await startGateway(undefined, { broker: { root: { workspaceRoot: scratch }, cancelGraceMs: 1_000, log: () => {} } });
  const step = fileURLToPath(new URL('./children/hostile-step.ts', import.meta.url));
  gw.gateway.withVirtualAgent('stepper', new LocalRunner({ command: process.execPath, args: ['--import', import.meta.resolve('tsx'), step], reapGraceMs: 1_000 }), { description: 'stepper' });
  const longStep = fileURLToPath(new URL('./children/long-step.ts', import.meta.url));
  gw.gateway.withVirtualAgent('long-stepper', new LocalRunner({ command: process.execPath, args: ['--import', import.meta.resolve('tsx'), longStep], reapGraceMs: 1_000 }), { description: 'long names' });
});

after(async () => {
  await gw?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/**
 * Runs a hostile worker (`agent`: `stepper` with `prompt` `N` or `N*M`, `long-stepper` with its
 * JSON plan; see the children) to its end in `state`, and returns the task's node events, its step
 * entries, the task as a snapshot has it and the CPU time this process spent meanwhile (a bound on
 * every stall of its main thread, however it is made, that a loaded machine does not stretch as it
 * does a wall-clock gap; the worker is a child process, not counted).
 */
async function runStepper(
  prompt: string,
  agent = 'stepper',
  state: TaskState = 'completed',
): Promise<{ nodes: TaskNode[]; steps: string[]; snapshotNodes: TaskNode[]; snapshot: TaskView | undefined; cpuMs: number }> {
  const { host, events, attach } = recordingHost(gw);
  attach();
  const updates = (): TaskUpdate[] => events.flatMap((e) => (e.channel === EVENT_CHANNELS.task ? [e.payload as TaskUpdate] : []));
  try {
    const { result: taskId, cpuMs } = await cpuDuring(async () => {
      const { taskId } = (await host.handle(INVOKE_CHANNELS.startTask, top, { agent, prompt })) as { taskId: string };
      await until(() => updates().some((u) => u.type === 'ended'), 'the task to end');
      return taskId;
    });
    const ended = updates().find((u) => u.type === 'ended');
    assert.equal(ended?.type === 'ended' && ended.state, state);
    const { tasks } = (await host.handle(INVOKE_CHANNELS.snapshot, top, undefined)) as { tasks: TaskView[] };
    const snapshot = tasks.find((t) => t.taskId === taskId);
    return {
      nodes: updates().flatMap((u) => (u.type === 'node' && u.taskId === taskId ? [u.node] : [])),
      steps: updates().flatMap((u) => (u.type === 'entry' && u.taskId === taskId && u.entry.kind === 'step' ? [u.entry.text] : [])),
      snapshotNodes: snapshot?.nodes ?? [],
      snapshot,
      cpuMs,
    };
  } finally {
    host.close();
  }
}

/**
 * The CPU a hostile task cost this process beyond a task of one plain step: under `limitMs`. The
 * plain task pays the rest of a task (its worker's spawn, its frames), which is not what is measured.
 */
async function costsUnder(hostile: { cpuMs: number }, limitMs: number): Promise<void> {
  const plain = await runStepper('1');
  const extraMs = hostile.cpuMs - plain.cpuMs;
  console.log(`# the hostile task: ${Math.round(hostile.cpuMs)} ms of CPU, a plain one ${Math.round(plain.cpuMs)} ms`);
  assert.ok(extraMs < limitMs, `the hostile task cost ${Math.round(extraMs)} ms of CPU more than a plain one (${Math.round(hostile.cpuMs)} against ${Math.round(plain.cpuMs)} ms)`);
}

test("a worker's step naming 40,000 nodes as started under it costs the app's process under a second of CPU more than a plain step and draws none of them (deeper than a delegation chain goes)", async () => {
  const hostile = await runStepper('40000');
  const { nodes, steps } = hostile;
  // Before: 3.3 s of main thread (each name added looked through every node before it).
  await costsUnder(hostile, 1_000);
  assert.deepEqual(
    nodes.map((n) => n.name),
    ['stepper-0'],
    `the tree drew ${nodes.length} nodes from one step`,
  );
  // The step itself is still the timeline's, whole: only the tree does not believe it.
  assert.equal(steps.length, 1);
  assert.ok(steps[0]!.startsWith('x-0: x-1: ') && steps[0]!.endsWith(': x-39999 started'));
});

test('a step naming as deep a chain as the broker allows is drawn, each name under the one before; one name more and none is', async () => {
  const deepest = MAX_DELEGATION_DEPTH - 1; // the top agent is depth 1: its relays name the depths below it
  const drawn = await runStepper(String(deepest));
  assert.deepEqual(
    drawn.nodes,
    [{ name: drawn.nodes[0]!.name, role: 'stepper', parent: 'root' }, ...Array.from({ length: deepest }, (_, i) => ({ name: `x-${i}`, role: 'x', parent: i === 0 ? drawn.nodes[0]!.name : `x-${i - 1}` }))],
  );
  const tooDeep = await runStepper(String(deepest + 1));
  assert.deepEqual(tooDeep.nodes.map((n) => n.role), ['stepper']);
});

test(`steps naming 2,000 nodes one by one: the tree holds ${MAX_NODES_PER_TASK} nodes and says once that it draws no more; each event is the node it added`, async () => {
  const hostile = await runStepper('1*2000');
  const { nodes, snapshotNodes } = hostile;
  await costsUnder(hostile, 1_000);
  assert.equal(nodes.length, MAX_NODES_PER_TASK + 1, `${nodes.length} node events`);
  const notes = nodes.filter((n) => n.name.includes(' '));
  assert.equal(notes.length, 1, JSON.stringify(notes));
  assert.equal(notes[0], nodes.at(-1));
  assert.match(notes[0]!.name, new RegExp(`at most ${MAX_NODES_PER_TASK}`));
  assert.equal(notes[0]!.parent, 'root');
  // The window's events and the snapshot a reloaded window takes are the same tree, in order.
  assert.deepEqual(snapshotNodes, nodes);
  assert.equal(new Set(nodes.map((n) => n.name)).size, nodes.length);
});

test(`steps naming nodes of 64 Ki characters draw none of them (a node's name is at most ${MAX_NAME_CHARS}); a name of exactly ${MAX_NAME_CHARS} is drawn`, async () => {
  const long = await runStepper(JSON.stringify({ nameChars: 64 * 1024, steps: 20 }), 'long-stepper');
  assert.deepEqual(
    long.nodes.map((n) => n.name.length),
    ['long-stepper-0'.length],
    'the tree drew the long names',
  );
  assert.deepEqual(long.snapshotNodes, long.nodes);
  // The steps themselves stay in the timeline (within its budget): only the tree does not draw them.
  assert.equal(long.steps.length, 20);

  const longest = await runStepper(JSON.stringify({ nameChars: MAX_NAME_CHARS, steps: 1 }), 'long-stepper');
  assert.deepEqual(
    longest.nodes.map((n) => [n.name.length, n.parent]),
    [
      [longest.nodes[0]!.name.length, 'root'],
      [MAX_NAME_CHARS, longest.nodes[0]!.name],
    ],
  );
  const tooLong = await runStepper(JSON.stringify({ nameChars: MAX_NAME_CHARS + 1, steps: 1 }), 'long-stepper');
  assert.equal(tooLong.nodes.length, 1);
});

test(`a step and a failure each longer than a task's timeline budget (${MAX_TEXT_PER_TASK} characters) are kept cut, saying so: the snapshot holds the budget, the window was sent the same`, async () => {
  const over = 2 * MAX_TEXT_PER_TASK;
  const { snapshot, steps } = await runStepper(JSON.stringify({ nameChars: 20, steps: 0, stepChars: over, failChars: over }), 'long-stepper', 'failed');
  assert.ok(snapshot);
  const chars = snapshot.entries.reduce((n, e) => n + e.text.length, 0);
  assert.ok(chars <= MAX_TEXT_PER_TASK, `the task's timeline keeps ${chars} characters`);
  const step = snapshot.entries.find((e) => e.kind === 'step');
  const result = snapshot.entries.find((e) => e.kind === 'result');
  // The newest entry, the result, is kept (cut); the step, older, went to keep the budget.
  assert.equal(step, undefined);
  assert.ok(result && result.text.startsWith('failed: ffff') && result.text.length <= MAX_TEXT_PER_TASK);
  assert.match(result.text, /characters not kept\)$/);
  assert.ok((snapshot.error?.length ?? 0) <= MAX_ERROR_CHARS, `the task's error is ${snapshot.error?.length} characters`);
  assert.match(snapshot.error ?? '', /^f+… \(\d+ characters not kept\)$/);
  // What the window was sent is what was kept.
  assert.equal(steps.length, 1);
  assert.ok(steps[0]!.length <= MAX_TEXT_PER_TASK && steps[0]!.startsWith('zzz'), `the window was sent a step of ${steps[0]!.length} characters`);
});
