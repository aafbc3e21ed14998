/**
 * The hello: a refused hello gets its error, flushed, before the connection
 * closes (on a spawned connection and on the shared socket, through the same mechanism); the
 * 30 s and 5 s timeouts; a refused node never touches the node registered under its name.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Duplex } from 'node:stream';
import { after, afterEach, describe, it, mock } from 'node:test';
import {
  CLOSE_GRACE_MS,
  Directory,
  HELLO_TIMEOUT_MS,
  SHARED_SOCKET_HELLO_TIMEOUT_MS,
  SHARED_SOCKET_REFUSAL,
  openConnection,
  refuseConnection,
  serveConnection,
} from '../../main/fabric/index.js';
import { HELLO, Puppet, childArgs, memoryPeer, newFabric } from './helpers.js';

const children: ChildProcess[] = [];
after(() => children.forEach((c) => c.kill('SIGKILL')));

/**
 * A peer whose writes reach it only on a later turn of the event loop, as a kernel buffer does:
 * destroying the stream first loses them. Lines it receives are in `delivered`.
 */
class SlowPeer extends Duplex {
  readonly delivered: string[] = [];
  override _read(): void {}
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error) => void): void {
    setImmediate(() => {
      if (!this.destroyed) {
        this.delivered.push(...chunk.toString().split('\n').filter(Boolean));
        this.emit('delivered');
      }
      done();
    });
  }
  say(line: string): void {
    this.push(`${line}\n`);
  }
}

/** A fabric whose registry already holds `puppet-0` (on an in-memory connection), and a directory that will name the next puppet `puppet-0` again. */
async function fabricWithPuppet0Taken() {
  const fabric = newFabric();
  const peer = memoryPeer();
  const first = serveConnection(peer.stream, fabric.registry, new Directory().admit('puppet'));
  peer.write(HELLO);
  await first.hello;
  return { fabric, first };
}

const refusedHello = (id: number) => ({
  v: 3,
  id,
  error: { kind: 'refused', reason: 'fabric: puppet-0 is already registered', message: 'refused: fabric: puppet-0 is already registered' },
});

describe('a refused hello', () => {
  it('reaches the spawned worker before its connection closes, and the node holding the name keeps it', async () => {
    const { fabric, first } = await fabricWithPuppet0Taken();
    const { puppet, opening } = Puppet.start(fabric, { log: () => {} });
    children.push(puppet.child);
    await assert.rejects(opening, /puppet-0 \(.*\) did not complete its hello: hello refused: fabric: puppet-0 is already registered/);
    await puppet.next((m) => m.ended === true);
    // The error for the hello's id came first, then the end of the connection, and nothing else.
    assert.deepEqual(puppet.reports, [{ got: refusedHello(1) }]);
    await puppet.exited();
    assert.equal(fabric.registry.get('puppet-0')?.connection, first, 'the registered node is untouched');
    assert.ok(first.isOpen);
  });

  it('reaches a worker built on main/worker, whose hello rejects with the refusal', async () => {
    const { fabric } = await fabricWithPuppet0Taken();
    const error = await openConnection('puppet', process.execPath, childArgs('echo-worker.ts', 'echo'), {
      ...fabric,
      log: () => {},
      onSpawn: (child) => children.push(child),
    }).then(
      () => assert.fail('the hello should be refused'),
      (err: Error) => err,
    );
    // The worker's own report, from the tail of its stderr: it read the error frame.
    assert.match(error.message, /echo-worker: hello refused: refused: refused: fabric: puppet-0 is already registered$/);
  });

  it('is flushed before the stream is destroyed, and nothing after the hello is acted on', async () => {
    const { fabric } = await fabricWithPuppet0Taken();
    const peer = new SlowPeer();
    let called = 0;
    const connection = serveConnection(peer, fabric.registry, new Directory().admit('puppet'), {
      log: () => {},
      calls: async () => (called++, []),
    });
    // The hello and a call in one chunk: the call must never run for a node that was refused.
    peer.say(`${HELLO.replace('"id":1', '"id":4')}\n{"v":3,"id":5,"method":"agent.list"}`);
    await assert.rejects(connection.hello, /hello refused/);
    if (peer.delivered.length === 0) await once(peer, 'delivered');
    assert.deepEqual(peer.delivered.map((l) => JSON.parse(l)), [refusedHello(4)]);
    assert.equal(called, 0);
    assert.ok(!peer.destroyed, 'the stream waits for the worker to close its end');
    peer.push(null); // the worker reads the error and closes
    assert.match(await connection.closed, /hello refused/);
    assert.ok(peer.destroyed);
  });

  it('closes a worker that never reads (nor closes) once the grace period ends, and reaps it', async () => {
    const { fabric } = await fabricWithPuppet0Taken();
    const { puppet, opening } = Puppet.start(fabric, { log: () => {}, deaf: true, closeGraceMs: 100 });
    children.push(puppet.child);
    await assert.rejects(opening, /hello refused/);
    await puppet.exited();
    assert.equal(puppet.child.signalCode, 'SIGTERM');
  });
});

describe('hello timeouts', () => {
  afterEach(() => mock.timers.reset());

  it('a spawned worker has 30 s by default', async () => {
    assert.equal(HELLO_TIMEOUT_MS, 30_000);
    mock.timers.enable({ apis: ['setTimeout'] });
    const fabric = newFabric();
    const peer = memoryPeer();
    const connection = serveConnection(peer.stream, fabric.registry, fabric.directory.admit('slow'), { log: () => {} });
    mock.timers.tick(HELLO_TIMEOUT_MS - 1);
    assert.ok(connection.isOpen);
    mock.timers.tick(1);
    assert.equal(connection.isOpen, false);
    assert.equal(await connection.closed, 'no session.hello within 30 s');
  });

  it('a hello in time stops the clock', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    const fabric = newFabric();
    const peer = memoryPeer();
    const connection = serveConnection(peer.stream, fabric.registry, fabric.directory.admit('slow'), { log: () => {} });
    mock.timers.tick(HELLO_TIMEOUT_MS - 1);
    peer.write(HELLO);
    await connection.hello;
    mock.timers.tick(HELLO_TIMEOUT_MS);
    assert.ok(connection.isOpen);
    assert.ok(fabric.registry.get('slow-0'));
  });

  it('the shared socket waits 5 s by default for a first line', async () => {
    assert.equal(SHARED_SOCKET_HELLO_TIMEOUT_MS, 5_000);
    mock.timers.enable({ apis: ['setTimeout'] });
    const peer = new SlowPeer();
    refuseConnection(peer);
    mock.timers.tick(SHARED_SOCKET_HELLO_TIMEOUT_MS - 1);
    assert.equal(peer.destroyed, false);
    mock.timers.tick(1);
    assert.equal(peer.destroyed, true);
    assert.deepEqual(peer.delivered, []);
  });
});

describe('the shared socket refuses through the same flush', () => {
  afterEach(() => mock.timers.reset());
  it('a hello gets refused under its id, flushed before the stream goes', async () => {
    const peer = new SlowPeer();
    refuseConnection(peer);
    peer.say(HELLO.replace('"id":1', '"id":9'));
    await once(peer, 'delivered');
    assert.deepEqual(JSON.parse(peer.delivered[0]!), {
      v: 3,
      id: 9,
      error: { kind: 'refused', reason: SHARED_SOCKET_REFUSAL, message: `refused: ${SHARED_SOCKET_REFUSAL}` },
    });
    peer.push(null);
    await once(peer, 'close');
  });

  it('a refused peer that never closes its end is destroyed after the grace period', async () => {
    assert.equal(CLOSE_GRACE_MS, 5_000);
    // The grace period on a mocked clock: a loaded machine can otherwise let a short real one run
    // out before the slow peer has taken the line, which would test the load, not the rule.
    mock.timers.enable({ apis: ['setTimeout'] });
    const peer = new SlowPeer();
    refuseConnection(peer, { closeGraceMs: 20 });
    peer.say(HELLO);
    await once(peer, 'delivered');
    assert.equal(peer.delivered.length, 1);
    mock.timers.tick(19);
    assert.equal(peer.destroyed, false, 'the peer still has its grace period');
    const closed = once(peer, 'close');
    mock.timers.tick(1); // never pushed null: only the grace period can end it
    assert.equal(peer.destroyed, true);
    await closed;
  });
});
