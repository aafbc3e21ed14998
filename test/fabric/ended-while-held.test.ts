/**
 * A worker that writes an event and its task's outcome in one go and exits, while its caller reads
 * slowly: the event waits for room in the caller's queue (a listener's promise holds this
 * connection's reading), the outcome is left unread in the chunk, and the socket, its data all
 * taken, ends though paused. The outcome is acted on once the hold is released, then the
 * connection closes; before, the end closed it at once and the completed task was reported
 * failed ('disconnected: …'). Real child: the puppet worker on a real socketpair.
 */
import assert from 'node:assert/strict';
import type { Duplex } from 'node:stream';
import { describe, it } from 'node:test';
import { puppetOpener } from './helpers.js';

const puppet = puppetOpener();

/** Resolves once `condition` holds, checked every turn; fails after 60 s (a hang guard, not a speed check). */
async function until(condition: () => boolean, what: string): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > 60_000) assert.fail(`still waiting for: ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("a worker's connection that ends while its caller holds its reading", () => {
  it('acts on the outcome left unread in the last chunk once the hold is released, then closes: the task completed', async () => {
    const p = await puppet();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let heard!: () => void;
    const first = new Promise<void>((resolve) => (heard = resolve));
    const task = await p.connection.runTask({ taskId: 't1', text: 'x' }, () => {
      heard();
      return held;
    });
    await p.next((m) => (m.got as { method?: string } | undefined)?.method === 'task.run');
    // One write: the event and the outcome reach the broker in one chunk.
    const event = JSON.stringify({ v: 3, method: 'task.event', params: { kind: 'status', id: task.id, state: 'working', message: 'one' } });
    const outcome = JSON.stringify({ v: 3, id: task.id, result: { state: 'completed' } });
    p.send(`${event}\n${outcome}`);
    await first;
    assert.equal(p.connection.readingPaused, true, "held while the caller's queue has no room");
    p.end(); // the puppet exits: its end of the socketpair closes
    await p.exited();
    const stream = (p.connection as unknown as { stream: Duplex }).stream;
    await until(() => stream.readableEnded || !p.connection.isOpen, "the broker's side saw the end");
    assert.equal(p.connection.isOpen, true, 'not closed while the outcome is unread');
    release();
    assert.deepEqual(await task.outcome, { state: 'completed' });
    assert.equal(await p.connection.closed, 'the worker closed the connection');
  });

  it('an end with nothing unread closes at once, failing the task it owes, as before', async () => {
    const p = await puppet();
    const task = await p.connection.runTask({ taskId: 't2', text: 'x' });
    await p.next((m) => (m.got as { method?: string } | undefined)?.method === 'task.run');
    p.end();
    assert.match(await p.connection.closed, /^the (worker closed the connection|connection closed)$/);
    const got = await task.outcome;
    assert.equal(got.state, 'failed');
    assert.match((got as { message: string }).message, /^disconnected: /);
  });
});
