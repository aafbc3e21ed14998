/**
 * What one hostile worker can cost the gateway: a caller that stops reading, a callee that floods
 * text, a tree that fans out. Real children over real socketpairs: the scriptable test agent, and
 * raw participants that misbehave on purpose.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { ParticipantConnection } from '../../main/fabric/admission/index.js';
import { OUTBOUND_QUEUE_BYTES } from '../../main/fabric/limits/index.js';
import { Broker, RootCallError } from '../../main/broker/index.js';
import { ProgressLog, plan, startBroker, until } from './helpers.js';

const DEAF_CALLER = fileURLToPath(new URL('./children/deaf-caller.ts', import.meta.url));

describe('a caller that stops reading', () => {
  // 256 KiB steps fill the queue by its byte cap long before its frame count; 4 MiB steps are
  // each a frame over the cap (the reviewer's case: the old 64-frame bound held 260 MiB).
  for (const [label, step, count] of [
    ['256 KiB', 256 * 1024, 200],
    ['4 MiB', 4 * 1024 * 1024, 12],
  ] as const) {
    it(`pauses its callee's reading once its outbound queue is full: with ${label} status steps it holds at most OUTBOUND_QUEUE_BYTES and one frame`, async () => {
      const t = startBroker(['talker']);
      try {
        let talker: ParticipantConnection | undefined;
        t.broker.registry.on('registered', (p) => {
          if (p.node.name === 'talker-0') talker = p.connection;
        });
        const invoke = { agent: 'talker', prompt: plan({ steps: { count, bytes: step } }) };
        const opened = await t.broker.openParticipant('deaf', process.execPath, ['--import', 'tsx', DEAF_CALLER], { env: { ...process.env, CHATTY_TEST_INVOKE: JSON.stringify(invoke) } });
        const queue = opened.connection.outbound;
        // Either the talker is held (the fix) or it has been read to its end and reaped (every step queued).
        await until(() => talker !== undefined && (talker.readingPaused || !talker.isOpen), 'the talker paused or done');
        assert.ok(talker!.isOpen && talker!.readingPaused, 'the talker is paused, its task not over');
        const frame = step + 200;
        assert.ok(queue.heldBytes <= OUTBOUND_QUEUE_BYTES + frame, `the queue holds ${queue.heldBytes} bytes for the deaf caller`);
        assert.ok(queue.waiters <= 1, `${queue.waiters} waiting`);
      } finally {
        // Closing the deaf caller cancels its call: the talker is released, ends and is reaped.
        await t.close();
      }
    });
  }
});

describe("a task's text", () => {
  it('is kept up to maxTaskTextBytes: its head and its tail, a line counting the cut, and metadata.responseCutBytes; progress streams all of it', async () => {
    const cap = 64 * 1024;
    const t = startBroker(['talker'], { maxTaskTextBytes: cap });
    try {
      let streamed = 0;
      const count = 100;
      const result = await t.root.invoke('talker', plan({ chunks: { count, size: 1000 } }), {
        onProgress: (e) => {
          if ('Text' in e) streamed += Buffer.byteLength(e.Text);
        },
      });
      assert.equal(result.success, true, result.error);
      const total = Array.from({ length: count }, (_, i) => `[${i}]`.length + 2000).reduce((a, b) => a + b);
      assert.equal(streamed, total, 'every chunk reached the reading caller as progress');
      const cut = result.metadata?.responseCutBytes ?? 0;
      const marker = `\n[… ${cut} bytes of this task's text cut here: the broker keeps at most ${cap} bytes of it, its head and its tail …]\n`;
      const [head, tail, ...rest] = result.response.split(marker);
      assert.deepEqual(rest, [], 'one line marks the cut');
      assert.ok(head!.startsWith('[0]éé') && tail!.startsWith('é') && tail!.endsWith(`[${count - 1}]${'é'.repeat(1000)}`));
      assert.ok(!result.response.includes('\uFFFD'), 'no character was split');
      assert.equal(Buffer.byteLength(head!), cap / 2, 'the head is the first half');
      assert.ok(Buffer.byteLength(tail!) <= cap / 2 && Buffer.byteLength(tail!) >= cap / 2 - 1, 'the tail is the last half, less a split character');
      assert.equal(Buffer.byteLength(head!) + cut + Buffer.byteLength(tail!), total, 'what was cut is counted exactly');
    } finally {
      await t.close();
    }
  });

  it('is kept whole under the cap, with no responseCutBytes', async () => {
    const t = startBroker(['talker'], { maxTaskTextBytes: 64 * 1024 });
    try {
      const result = await t.root.invoke('talker', plan({ chunks: { count: 3, size: 10 } }));
      assert.equal(result.response, [0, 1, 2].map((i) => `[${i}]${'é'.repeat(10)}`).join(''));
      assert.equal(result.metadata?.responseCutBytes, undefined);
    } finally {
      await t.close();
    }
  });
});

describe('fan-out caps', () => {
  it('maxWorkersPerTask: a call past the cap under one root task is refused at once, naming it; another root task is not held to it', { timeout: 180_000 }, async () => {
    const t = startBroker(['lead', 'helper'], { maxWorkersPerTask: 3 });
    try {
      const progress = new ProgressLog();
      const controller = new AbortController();
      // lead-0 and two helpers fill the tree's three slots; the third helper is refused (never queued: the others hang).
      const hang = { delegate: { to: 'helper', prompt: { hang: true } } };
      const call = t.root.invoke('lead', plan({ parallel: [hang, hang, hang] }), { onProgress: progress.push, signal: controller.signal });
      await progress.until((e) => 'Text' in e && e.Text.includes('maxWorkersPerTask'));
      const refusal = progress.events.find((e): e is { Text: string } => 'Text' in e)!;
      assert.deepEqual(JSON.parse(refusal.Text), {
        kind: 'refused',
        reason: 'too many workers in this task: at most 3 live at once under one root task (maxWorkersPerTask)',
        message: 'refused: too many workers in this task: at most 3 live at once under one root task (maxWorkersPerTask)',
      });
      await until(() => progress.events.filter((e) => 'Step' in e && e.Step.includes('waiting')).length === 2, 'two helpers waiting');
      const other = await t.root.invoke('helper', plan({ echo: 'another tree' }));
      assert.equal(other.response, 'another tree');
      controller.abort();
      assert.equal((await call).cancelled_by_user, true);
      assert.deepEqual(t.alive(), []);
    } finally {
      await t.close();
    }
  });

  it('maxWorkers: past the gateway-wide cap a call is refused at once, naming it; a slot is free again once its worker is reaped', { timeout: 180_000 }, async () => {
    const t = startBroker(['helper'], { maxWorkers: 2 });
    try {
      const controllers = [new AbortController(), new AbortController()];
      const progress = new ProgressLog();
      const calls = controllers.map((c) => t.root.invoke('helper', plan({ hang: true }), { onProgress: progress.push, signal: c.signal }));
      await assert.rejects(t.root.invoke('helper', plan({ echo: 'a third' })), (err: unknown) => {
        assert.ok(err instanceof RootCallError);
        assert.equal(err.message, 'refused: too many workers: at most 2 live at once in this gateway (maxWorkers)');
        return true;
      });
      await until(() => progress.events.filter((e) => 'Step' in e && e.Step.endsWith('waiting')).length === 2, 'both helpers waiting');
      controllers[0]!.abort();
      assert.equal((await calls[0]!).cancelled_by_user, true);
      assert.equal((await t.root.invoke('helper', plan({ echo: 'in the freed slot' }))).response, 'in the freed slot');
      controllers[1]!.abort();
      await calls[1];
    } finally {
      await t.close();
    }
  });

  it('the caps are options: a value that is not a positive integer is refused when the broker is made', () => {
    assert.throws(() => new Broker({ maxWorkers: 0 }), /broker: maxWorkers must be a positive integer, not 0/);
    assert.throws(() => new Broker({ maxWorkersPerTask: 1.5 }), /broker: maxWorkersPerTask must be a positive integer, not 1.5/);
    assert.throws(() => new Broker({ maxTaskTextBytes: -1 }), /broker: maxTaskTextBytes must be a positive integer, not -1/);
  });
});
