/**
 * A peer that sends calls but never reads their answers: the broker stops reading it while the
 * answers wait for room, so what it holds for that peer stays bounded, and it reads on (losing
 * nothing) once the peer reads again.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Duplex, PassThrough } from 'node:stream';
import { it } from 'node:test';
import { OUTBOUND_QUEUE_FRAMES, serveConnection } from '../../main/fabric/index.js';
import { HELLO, newFabric } from './helpers.js';

const list = (id: number) => `{"v":3,"id":${id},"method":"agent.list"}\n`;
const calls = (from: number, count: number) => Array.from({ length: count }, (_, n) => list(from + n)).join('');

it('a peer that never reads cannot make its answers pile up; reading again delivers every one', async () => {
  const fabric = newFabric();
  const toBroker = new PassThrough();
  const fromBroker = new PassThrough({ highWaterMark: 1024 });
  const stream = Duplex.from({ readable: toBroker, writable: fromBroker });
  const connection = serveConnection(stream, fabric.registry, fabric.directory.admit('flood'), { log: () => {} });
  toBroker.write(`${HELLO}\n`);
  await connection.hello;

  // One chunk of 1,000 calls: the burst runs them (and the default handler refuses them all),
  // the rest are over the rate: every one gets an answer, far more than the queue holds.
  const paused = once(stream, 'pause');
  toBroker.write(calls(2, 1000));
  await paused;
  const heldAfterFirst = connection.outbound.length + connection.outbound.waiters;
  assert.equal(connection.outbound.length, OUTBOUND_QUEUE_FRAMES);
  assert.ok(connection.outbound.waiters > 0);

  // More calls while the broker is not reading: they stay unread in the stream, not as answers.
  toBroker.write(calls(1002, 1000));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(connection.outbound.length + connection.outbound.waiters, heldAfterFirst);
  assert.ok(connection.isOpen);

  // The peer reads again: every call is answered exactly once, and the connection stays open.
  const ids: number[] = [];
  let buffered = '';
  const allAnswered = new Promise<void>((resolve) => {
    fromBroker.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const frame = JSON.parse(buffered.slice(0, newline)) as { id: number };
        buffered = buffered.slice(newline + 1);
        ids.push(frame.id);
        if (ids.length === 2001) resolve();
      }
    });
  });
  await allAnswered;
  assert.deepEqual(ids.sort((a, b) => a - b), Array.from({ length: 2001 }, (_, n) => n + 1));
  assert.ok(connection.isOpen);
  connection.close('test over');
});
