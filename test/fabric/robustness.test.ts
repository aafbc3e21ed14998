/**
 * Nothing a peer sends, and nothing a connection's own stream does, can throw out of the fabric or
 * reach another connection; closing cancels what the node had in flight. In memory
 * (serveConnection over a duplex), plus the worker's end (WorkerSession) against a bad broker.
 */
import assert from 'node:assert/strict';
import { Duplex, PassThrough } from 'node:stream';
import { finished } from 'node:stream/promises';
import { describe, it } from 'node:test';
import {
  CALL_BURST,
  CALLS_PER_SECOND,
  CLOSE_GRACE_MS,
  HELLO_TIMEOUT_MS,
  MAX_DELEGATION_DEPTH,
  MAX_FRAME_BYTES,
  MAX_IN_FLIGHT_CALLS,
  MAX_OPAQUE_BYTES,
  MAX_PENDING_APPROVALS,
  MAX_PENDING_QUESTIONS,
  OUTBOUND_QUEUE_FRAMES,
  SHARED_SOCKET_HELLO_TIMEOUT_MS,
  STDERR_TAIL_BYTES,
  StderrTail,
  serveConnection,
  type CallHandler,
  type ServeOptions,
} from '../../main/fabric/index.js';
import { WorkerSession } from '../../main/worker/index.js';
import { CARD, HELLO, memoryPeer, newFabric } from './helpers.js';

/** A served connection past its hello, on an in-memory stream. */
async function served(fabric = newFabric(), options: ServeOptions = {}) {
  const peer = memoryPeer();
  const connection = serveConnection(peer.stream, fabric.registry, fabric.directory.admit('mem'), { log: () => {}, ...options });
  peer.write(HELLO);
  await connection.hello;
  await peer.linesAtLeast(1);
  /** Sends `line` and resolves with the broker's next line. */
  const ask = async (line: string) => {
    const before = peer.lines.length;
    peer.write(line);
    await peer.linesAtLeast(before + 1);
    return JSON.parse(peer.lines[before]!) as Record<string, unknown>;
  };
  return { peer, connection, fabric, ask };
}

const list = (id: number) => `{"v":3,"id":${id},"method":"agent.list"}`;

describe('the limits table', () => {
  it('has the documented values', () => {
    assert.equal(MAX_FRAME_BYTES, 34_603_008);
    assert.equal(OUTBOUND_QUEUE_FRAMES, 64);
    assert.equal(MAX_IN_FLIGHT_CALLS, 32);
    assert.equal(CALLS_PER_SECOND, 10);
    assert.equal(CALL_BURST, 32);
    assert.equal(MAX_PENDING_APPROVALS, 4);
    assert.equal(MAX_PENDING_QUESTIONS, 4);
    assert.equal(MAX_OPAQUE_BYTES, 32 * 1024 * 1024);
    assert.equal(MAX_DELEGATION_DEPTH, 4);
    assert.equal(HELLO_TIMEOUT_MS, 30_000);
    assert.equal(SHARED_SOCKET_HELLO_TIMEOUT_MS, 5_000);
    assert.equal(STDERR_TAIL_BYTES, 8 * 1024);
    assert.equal(CLOSE_GRACE_MS, 5_000);
  });
});

describe('StderrTail', () => {
  it('keeps exactly the last 8 KiB, across chunk boundaries', async () => {
    const stream = new PassThrough();
    const tail = new StderrTail(stream);
    let all = '';
    for (let n = 0; n < 1500; n++) {
      const chunk = `line ${n} ${'.'.repeat(n % 37)}\n`;
      all += chunk;
      stream.write(chunk);
    }
    stream.end();
    await finished(stream);
    assert.ok(all.length > 2 * STDERR_TAIL_BYTES);
    assert.equal(tail.text(), all.slice(-STDERR_TAIL_BYTES));
  });

  it('keeps the last bytes whatever the chunks: one exactly filling it, one larger than it, one byte at a time', () => {
    const stream = new PassThrough();
    const tail = new StderrTail(stream, 16);
    let all = '';
    for (const chunk of ['abc', 'd'.repeat(13), 'efghijklmnopqrstuvwxyz0123', ...'456789'.split(''), 'X'.repeat(16), 'yz']) {
      all += chunk;
      stream.emit('data', Buffer.from(chunk));
      assert.equal(tail.text(), all.slice(-16), `after ${JSON.stringify(chunk)}`);
    }
  });

  it('keeps everything while there is less', async () => {
    const stream = new PassThrough();
    const tail = new StderrTail(stream);
    stream.end('short\n');
    await finished(stream);
    assert.equal(tail.text(), 'short\n');
  });
});

describe('what a call handler does cannot break the connection', () => {
  it('a result that cannot be encoded answers that call failed', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const { ask, connection } = await served(newFabric(), { calls: async () => cyclic });
    const answer = await ask(list(2));
    assert.equal((answer.error as { kind: string }).kind, 'failed');
    assert.match((answer.error as { message: string }).message, /circular/i);
    assert.ok(connection.isOpen);
  });

  it('an undefined result is answered null', async () => {
    const { ask } = await served(newFabric(), { calls: async () => undefined });
    assert.deepEqual(await ask(list(2)), { v: 3, id: 2, result: null });
  });

  it('a handler that throws a non-Error answers failed', async () => {
    const { ask } = await served(newFabric(), { calls: () => Promise.reject(null) });
    assert.deepEqual((await ask(list(2))).error, { kind: 'failed', reason: 'null', message: 'null' });
  });

  it('an error too large for the worker fails with a short error instead', async () => {
    const calls: CallHandler = async () => Promise.reject(new Error('e'.repeat(2000)));
    const { ask } = await served(newFabric(), { calls, workerMaxFrameBytes: 1000 });
    const error = (await ask(list(2))).error as { kind: string; message: string };
    assert.equal(error.kind, 'failed');
    assert.match(error.message, /over the receiver's frame cap of 1000/);
  });

  it('a task.event listener that throws is logged; the task and connection go on', async () => {
    const logged: string[] = [];
    const { peer, connection } = await served(newFabric(), { log: (m) => logged.push(m) });
    const task = await connection.runTask({ taskId: 't', text: 'x' }, () => {
      throw new Error('listener bug');
    });
    peer.write(`{"v":3,"method":"task.event","params":{"kind":"status","id":${task.id},"state":"working"}}`);
    peer.write(`{"v":3,"id":${task.id},"result":{"state":"completed"}}`);
    assert.deepEqual(await task.outcome, { state: 'completed' });
    assert.ok(connection.isOpen);
    assert.deepEqual(logged, ['a task.event listener threw: listener bug']);
  });
});

describe('closing', () => {
  it('cancels every call in flight (their signals abort), and fails every owed task naming the disconnect', async () => {
    const signals: AbortSignal[] = [];
    const calls: CallHandler = (_call, { signal }) => (signals.push(signal), new Promise(() => {}));
    const { peer, connection, fabric } = await served(newFabric(), { calls });
    const task = await connection.runTask({ taskId: 't', text: 'x' });
    peer.write(list(2));
    peer.write(list(3));
    while (signals.length < 2) await new Promise((resolve) => setImmediate(resolve));
    peer.write('{"v":3,"id":9,"method":"nope"}');
    assert.match(await connection.closed, /decode error: method/);
    assert.ok(signals.every((s) => s.aborted));
    assert.match(String(signals[0]!.reason), /disconnected: decode error/);
    assert.deepEqual(await task.outcome, {
      state: 'failed',
      message: `disconnected: mem-0's connection closed (${connection.reason})`,
    });
    assert.equal(fabric.registry.list().length, 0);
  });

  it('a req.cancel from the worker aborts that call alone', async () => {
    const signals = new Map<number, AbortSignal>();
    const calls: CallHandler = (call, { signal }) => (signals.set(call.id, signal), new Promise(() => {}));
    const { peer, connection } = await served(newFabric(), { calls });
    peer.write(list(2));
    peer.write(list(3));
    while (signals.size < 2) await new Promise((resolve) => setImmediate(resolve));
    peer.write('{"v":3,"method":"req.cancel","params":{"id":2}}');
    await new Promise<void>((resolve) => signals.get(2)!.addEventListener('abort', () => resolve()));
    assert.equal(signals.get(3)!.aborted, false);
    assert.ok(connection.isOpen);
  });

  it('a stream error (EPIPE, ECONNRESET) closes that connection without throwing', async () => {
    const { peer, connection } = await served();
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    peer.stream.destroy(reset);
    assert.equal(await connection.closed, 'connection error: read ECONNRESET');
  });
});

/** A peer that records, at once, every byte the broker writes. */
class RecordingPeer extends Duplex {
  written = '';
  override _read(): void {}
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.written += chunk.toString();
    done();
  }
}

describe('closes with no reply', () => {
  for (const [what, line] of [
    ['a first frame that is not a hello', '{"v":3,"id":1,"method":"agent.list"}'],
    ['a notification first', '{"v":3,"method":"req.cancel","params":{"id":1}}'],
    ['a second hello', HELLO.replace('"id":1', '"id":2')],
    ['a decode error', '{"v":3,"id":2,"method":"agent.list","x":1}'],
  ] as const) {
    it(what, async () => {
      const fabric = newFabric();
      const peer = new RecordingPeer();
      const connection = serveConnection(peer, fabric.registry, fabric.directory.admit('rec'), { log: () => {} });
      if (what !== 'a first frame that is not a hello' && what !== 'a notification first') {
        peer.push(`${HELLO}\n`);
        await connection.hello;
      }
      const before = peer.written;
      peer.push(`${line}\n`);
      await connection.closed;
      assert.equal(peer.written, before);
      assert.ok(peer.destroyed);
    });
  }
});

describe('one connection never touches another', () => {
  it('rate, in-flight count, drops and a close are per connection', async () => {
    let clock = 0;
    const fabric = newFabric();
    const hold: CallHandler = () => new Promise(() => {});
    const a = await served(fabric, { calls: hold, limits: { now: () => clock } });
    const b = await served(fabric, { calls: async () => [], limits: { now: () => clock } });
    // a: 32 calls held in flight, then one refused; b is still served.
    for (let id = 2; id <= 33; id++) a.peer.write(list(id));
    assert.equal(((await a.ask(list(34))).error as { reason: string }).reason, 'too many calls in flight: at most 32 per connection');
    assert.deepEqual((await b.ask(list(2))).result, []);
    // a closes: b stays registered and served.
    a.peer.write('garbage');
    await a.connection.closed;
    assert.equal(fabric.registry.get(a.connection.node.name), undefined);
    assert.ok(fabric.registry.get(b.connection.node.name));
    assert.deepEqual((await b.ask(list(3))).result, []);
  });
});

describe("the worker's end", () => {
  // memoryPeer plays the broker here: its stream is the worker's end.
  it('a broker that sends what a worker may not read closes the session; nothing throws', async () => {
    const broker = memoryPeer();
    const said = WorkerSession.hello(broker.stream, CARD);
    broker.write('{"v":3,"id":1,"result":{"name":"w-0","scope":"root","owner":null}}');
    const { session } = await said;
    const pending = session.call({ method: 'agent.list' });
    broker.write('{"v":3,"id":5,"method":"session.hello","params":{"card":{"name":"","description":"","version":"","skills":[]}}}');
    assert.match(await session.closed, /decode error: method/);
    await assert.rejects(pending, /disconnected: decode error/);
    assert.equal(await session.nextTask(), undefined);
  });

  it("a refused hello rejects with the broker's error", async () => {
    const broker = memoryPeer();
    const said = WorkerSession.hello(broker.stream, CARD);
    broker.write('{"v":3,"id":1,"error":{"kind":"refused","reason":"no","message":"refused: no"}}');
    await assert.rejects(said, (err: Error & { error?: { kind: string } }) => err.error?.kind === 'refused');
  });
});
