/**
 * Admission and liveness with the worker of main/worker on a real socketpair: the hello's answer
 * names the node, the connection is its liveness, and what it owed fails naming the disconnect.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { PassThrough, Duplex } from 'node:stream';
import { after, describe, it } from 'node:test';
import type { ChildProcess } from 'node:child_process';
import { STDERR_TAIL_BYTES, openConnection, serveConnection, type TaskEventParams } from '../../main/fabric/index.js';
import { childArgs, newFabric } from './helpers.js';

const children: ChildProcess[] = [];
after(() => children.forEach((c) => c.kill('SIGKILL')));

function open(fabric: ReturnType<typeof newFabric>, mode: string, extra: { helloTimeoutMs?: number } = {}) {
  return openConnection('local-coder', process.execPath, childArgs('echo-worker.ts', mode), {
    ...fabric,
    ...extra,
    onSpawn: (child) => {
      children.push(child);
      child.stdout!.resume();
    },
  });
}

describe('admission', () => {
  it('a spawned worker says hello, is told its name, runs a task and is deregistered when it leaves', async () => {
    const fabric = newFabric();
    const gone = once(fabric.registry, 'deregistered');
    const { node, connection } = await open(fabric, 'echo');
    assert.equal(node.name, 'local-coder-0');
    const registered = fabric.registry.get('local-coder-0');
    assert.equal(registered?.card.name, 'i-pick-my-own-name'); // kept as sent, and ignored for naming
    const events: TaskEventParams[] = [];
    const task = await connection.runTask({ taskId: 'task-1', text: 'summarise foo.rs' }, (e) => events.push(e));
    assert.deepEqual(await task.outcome, { state: 'completed', message: 'local-coder-0 in root: summarise foo.rs' });
    assert.deepEqual(events, [
      { kind: 'status', id: task.id, state: 'working', message: 'echoing' },
      { kind: 'artifact', id: task.id, text: 'summarise foo.rs', lastChunk: true },
    ]);
    const [participant, reason] = (await gone) as [{ node: { name: string } }, string];
    assert.equal(participant.node.name, 'local-coder-0');
    assert.match(reason, /closed/);
    assert.equal(fabric.registry.list().length, 0);
  });

  it('names are <spec>-<n> and never reused, even after the node is gone', async () => {
    const fabric = newFabric();
    const first = await open(fabric, 'hang');
    first.child.kill('SIGKILL');
    await first.connection.closed;
    const second = await open(fabric, 'hang');
    assert.equal(second.node.name, 'local-coder-1');
    assert.equal(fabric.directory.admit('local-reviewer').name, 'local-reviewer-0');
    second.child.kill('SIGKILL');
  });

  it('a worker that dies before its hello fails the open with the tail of its stderr', async () => {
    const error = await open(newFabric(), 'crash').then(
      () => assert.fail('the open should fail'),
      (err: Error) => err,
    );
    assert.match(error.message, /local-coder-0 .* did not complete its hello/);
    assert.match(error.message, /fatal: no model configured$/);
    const tail = error.message.split('--- the end of its stderr ---\n')[1]!;
    assert.ok(Buffer.byteLength(tail) <= STDERR_TAIL_BYTES, `kept ${Buffer.byteLength(tail)} bytes`);
  });

  it('a worker that never says hello is closed when the hello timeout ends', async () => {
    const fabric = newFabric();
    await assert.rejects(open(fabric, 'silent', { helloTimeoutMs: 200 }), /no session.hello within 0.2 s/);
    assert.equal(fabric.registry.list().length, 0);
  });
});

describe('the connection is the liveness signal', () => {
  it('when the worker dies, its tasks end failed naming the disconnect and it is deregistered', async () => {
    const fabric = newFabric();
    const { connection, child, node } = await open(fabric, 'hang');
    const owed = manual<unknown>();
    const working = new Promise<void>((resolve) => {
      void connection.runTask({ taskId: 'task-2', text: 'x' }, (e) => e.kind === 'status' && resolve()).then(async (task) => {
        owed.resolve(await task.outcome);
      });
    });
    await working;
    const second = await connection.runTask({ taskId: 'task-3', text: 'y' });
    child.kill('SIGKILL');
    const outcome = (await owed.promise) as { state: string; message: string };
    assert.equal(outcome.state, 'failed');
    assert.match(outcome.message, new RegExp(`^disconnected: ${node.name}'s connection closed`));
    assert.equal((await second.outcome).state, 'failed');
    assert.equal(fabric.registry.get(node.name), undefined);
    // A task asked of a closed connection fails the same way at once.
    assert.match((await (await connection.runTask({ taskId: 'late', text: 'z' })).outcome).message ?? '', /^disconnected/);
  });

  it('serveConnection takes any duplex stream, and its close deregisters too', async () => {
    const fabric = newFabric();
    const toBroker = new PassThrough();
    const fromBroker = new PassThrough();
    const stream = Duplex.from({ readable: toBroker, writable: fromBroker });
    const node = fabric.directory.admit('vm');
    const connection = serveConnection(stream, fabric.registry, node);
    toBroker.write('{"v":3,"id":1,"method":"session.hello","params":{"card":{"name":"","description":"d","version":"1","skills":[]}}}\n');
    await connection.hello;
    const [line] = (await once(fromBroker, 'data')) as [Buffer];
    assert.equal(line.toString(), '{"v":3,"id":1,"result":{"name":"vm-0","scope":"root","owner":null}}\n');
    assert.ok(fabric.registry.get('vm-0'));
    toBroker.end();
    assert.match(await connection.closed, /closed/);
    assert.equal(fabric.registry.get('vm-0'), undefined);
  });
});

function manual<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
