/**
 * `defaultWorker()` from the package root: an embedder's `LocalRunner` starts this package's own
 * `chatty-gateway worker` without spelling out its command. A real broker runs a task on it.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { Broker, LocalRunner, RootTransport, defaultWorker } from '../../main/index.js';
import { DirectoryFactory, tempDir } from './helpers.js';

const home = tempDir('chatty-default-worker-');
const broker = new Broker({ log: () => {}, root: { workspaceRoot: home } });
after(async () => {
  await broker.stop();
  rmSync(home, { recursive: true, force: true });
});

test('new LocalRunner(defaultWorker()) runs the scripted agent; defaultWorker(kind) names the kind', async () => {
  assert.deepEqual(defaultWorker().args.slice(-3), ['worker', '--participant-fd', '3']);
  assert.deepEqual(defaultWorker('llm').args.slice(-5), ['worker', '--participant-fd', '3', '--agent', 'llm']);
  broker.addVirtualAgent('coder', new LocalRunner(defaultWorker()), { description: 'the scripted agent' });
  broker.addVirtualAgent('scripted-in-a-dir', new LocalRunner({ ...defaultWorker('scripted'), workspaceFactory: new DirectoryFactory(home) }), { description: 'the scripted agent' });
  const root = new RootTransport(broker);
  const plain = await root.invoke('coder', 'say hello from the default worker');
  assert.equal(plain.success, true, plain.error);
  assert.equal(plain.response, 'hello from the default worker\n');
  const inDir = await root.invoke('scripted-in-a-dir', 'write notes.txt hi');
  // Nobody answers approvals here: the write is denied, which the scripted agent says.
  assert.equal(inDir.success, false);
  assert.equal(inDir.error, 'write denied: notes.txt');
});

test('new LocalRunner() with no command starts the same worker program; args without a command are refused', async () => {
  broker.addVirtualAgent('bare', new LocalRunner(), { description: 'the default worker' });
  const result = await new RootTransport(broker).invoke('bare', 'say started by a bare LocalRunner');
  assert.equal(result.success, true, result.error);
  assert.equal(result.response, 'started by a bare LocalRunner\n');
  assert.throws(() => new LocalRunner({ args: ['x'] }), /args without a command/);
});

test('inside Electron the default worker runs as Node even with an environment of its own (ELECTRON_RUN_AS_NODE kept)', async (t) => {
  // Electron's marker, as the runner reads it when it is made; only the worker's environment is looked at.
  Object.defineProperty(process.versions, 'electron', { value: '45.0.0', configurable: true });
  t.after(() => delete (process.versions as Record<string, string | undefined>)['electron']);
  broker.addVirtualAgent('in-electron', new LocalRunner({ env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' } }), { description: 'the default worker' });
  const root = new RootTransport(broker);
  const stop = root.onApproval(async () => 'approved' as const);
  t.after(stop);
  const result = await root.invoke('in-electron', 'exec printenv ELECTRON_RUN_AS_NODE');
  assert.equal(result.success, true, result.error);
  assert.match(result.response, /^1$/m);
});
