/**
 * The outbound queue's byte bound (issue 17 item 2's review): frames wait for room by bytes as
 * well as by count, counting what the stream holds; a frame larger than the cap goes alone, so a
 * big legitimate frame still passes and nothing deadlocks. A real stream whose reader stops:
 * a PassThrough with a small high-water mark, nobody reading it until the test says so.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { OUTBOUND_QUEUE_BYTES, OUTBOUND_QUEUE_FRAMES, OutboundQueue } from '../../main/fabric/limits/index.js';

const CAP = 8 * 1024;

function deafPeer() {
  const stream = new PassThrough({ highWaterMark: 1024 });
  const queue = new OutboundQueue(stream, OUTBOUND_QUEUE_FRAMES, CAP);
  /** Starts reading; resolves with the lines once `count` have arrived. */
  const read = (count: number) =>
    new Promise<string[]>((resolve) => {
      let text = '';
      stream.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        const lines = text.split('\n').slice(0, -1);
        if (lines.length >= count) resolve(lines);
      });
    });
  return { stream, queue, read };
}

const line = (n: number, size: number) => `${n}:`.padEnd(size - 1, 'x');

describe('the outbound queue in bytes', () => {
  it('defaults to OUTBOUND_QUEUE_BYTES (4 MiB) beside the frame count', () => {
    const queue = new OutboundQueue(new PassThrough());
    assert.equal(queue.maxBytes, OUTBOUND_QUEUE_BYTES);
    assert.equal(OUTBOUND_QUEUE_BYTES, 4 * 1024 * 1024);
    assert.equal(queue.capacity, OUTBOUND_QUEUE_FRAMES);
  });

  it('past the byte cap (the stream counted) producers wait, offer included, far below the frame count; reading delivers every frame in order', async () => {
    const { stream, queue, read } = deafPeer();
    const frameSize = 1000;
    const offered = Array.from({ length: 40 }, (_, n) => queue.offer(line(n, frameSize)));
    const waiting = offered.filter((p) => p !== undefined);
    assert.ok(queue.length < OUTBOUND_QUEUE_FRAMES, 'the frame count is not what stopped them');
    assert.equal(waiting.length, queue.waiters);
    assert.ok(queue.waiters > 20, `${queue.waiters} wait`);
    assert.equal(queue.heldBytes, (queue.length + queue.waiters) * frameSize, 'heldBytes counts the queued and the waiting frames');
    const pending = queue.length * frameSize + stream.writableLength;
    assert.ok(pending <= CAP, `the queue and the stream's buffer hold ${pending} bytes (cap ${CAP})`);

    const lines = await read(40);
    await Promise.all(waiting);
    assert.deepEqual(lines.map((l) => Number(l.split(':')[0])), Array.from({ length: 40 }, (_, n) => n));
    assert.equal(queue.heldBytes, 0);
    assert.equal(queue.waiters, 0);
  });

  it('a frame larger than the cap goes alone: at once into an idle queue, and after the stream has written what it held otherwise; the next frame waits for it', async () => {
    const { stream, queue, read } = deafPeer();
    const big = 3 * CAP;
    assert.equal(queue.offer(line(0, big)), undefined, 'an idle queue takes a frame over the cap at once');
    assert.ok(stream.writableNeedDrain, 'the stream holds it, backed up');
    const small = queue.offer(line(1, 100));
    assert.ok(small !== undefined, 'a small frame waits behind it: the cap counts the stream');
    const second = queue.send(line(2, big));
    const third = queue.offer(line(3, 100));
    assert.ok(third !== undefined, 'order is kept: nothing overtakes a waiting frame');
    assert.equal(queue.waiters, 3);
    assert.equal(queue.heldBytes, 100 + big + 100, 'the big frame handed to the stream is the stream’s, not the queue’s');

    const lines = await read(4);
    await Promise.all([small, second, third]);
    assert.deepEqual(lines.map((l) => [Number(l.split(':')[0]), l.length + 1]), [
      [0, big],
      [1, 100],
      [2, big],
      [3, 100],
    ]);
    assert.equal(queue.heldBytes, 0);
  });

  it('the frame count still holds for small frames', async () => {
    const stream = new PassThrough({ highWaterMark: 16 });
    const queue = new OutboundQueue(stream, 4, CAP);
    const offered = Array.from({ length: 10 }, (_, n) => queue.offer(line(n, 20)));
    assert.equal(queue.length, 4);
    const waiting = offered.filter((p) => p !== undefined);
    assert.equal(waiting.length, queue.waiters);
    assert.ok(queue.waiters >= 4);
    queue.stop(new Error('gone'));
    for (const p of waiting) await assert.rejects(p, /gone/);
  });
});
