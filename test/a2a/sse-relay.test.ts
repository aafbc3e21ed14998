/**
 * The relay's event splitting: an event ends where the SSE format says (a line ending — CRLF, LF
 * or CR — followed by another), however the bytes are chunked, and one large event in many small
 * chunks costs work in proportion to its size.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { relayEvents, SseEventSplitter, type RelayHooks } from '../../main/gateway/a2a/sse-relay.js';
import { ReadingBodies } from '../../main/gateway/reading/reading-bodies.js';
import { HELD_CHUNK_COST } from '../../main/gateway/reading/growing-body.js';

const hooks: RelayHooks = { clientGone: () => false, abortUpstream: () => {}, brokeOff: () => 'broke off', letGo: () => 'let go' };
const bodies = new ReadingBodies();
const ok = (n: number): string => `data: {"jsonrpc":"2.0","id":1,"result":{"n":${n}}}`;

function split(chunks: readonly string[]): { events: string[]; rest: string } {
  const splitter = new SseEventSplitter();
  const events = chunks.flatMap((chunk) => splitter.push(Buffer.from(chunk)).map(String));
  return { events, rest: String(splitter.rest()) };
}

describe('SseEventSplitter', () => {
  for (const [first, second] of [['\n\r\n', '\n\n'], ['\r\r', '\r\n\r\n'], ['\r\n\n', '\n\r']] as const) {
    it(`ends an event at ${JSON.stringify(first)} and at ${JSON.stringify(second)}, in one chunk or byte by byte`, () => {
      const stream = `${ok(1)}${first}${ok(2)}${second}`;
      for (const chunks of [[stream], [...stream]]) {
        const { events, rest } = split(chunks);
        assert.equal(events.join('') + rest, stream, 'every byte, in order');
        assert.equal(events.length, 2, JSON.stringify(events));
        assert.match(events[0]!, /"n":1/);
        assert.match(events[1]!, /"n":2/);
        assert.doesNotMatch(events[1]!.slice(1), /"n":1/);
      }
    });
  }

  it('a single line ending is not the end of an event', () => {
    for (const ending of ['\n', '\r\n', '\r']) {
      const { events, rest } = split([`data: a${ending}`, `data: b${ending}`]);
      assert.deepEqual([events, rest], [[], `data: a${ending}data: b${ending}`]);
    }
  });

  it('a CR that ends an event at a chunk end yields it at once; the LF after it opens the next one', () => {
    const splitter = new SseEventSplitter();
    assert.deepEqual(splitter.push(Buffer.from(`${ok(1)}\n\r`)).map(String), [`${ok(1)}\n\r`]);
    assert.deepEqual(splitter.push(Buffer.from(`\n${ok(2)}\n`)).map(String), []);
    assert.deepEqual(splitter.push(Buffer.from('\n')).map(String), [`\n${ok(2)}\n\n`]);
  });

  it('one 8 MiB event in 1 KiB chunks: each byte searched and copied a bounded number of times', () => {
    const splitter = new SseEventSplitter();
    const chunk = Buffer.alloc(1024, 'a');
    const chunks = 8 * 1024;
    assert.deepEqual(splitter.push(Buffer.from('data: ')), []);
    for (let i = 0; i < chunks; i++) assert.deepEqual(splitter.push(chunk), []);
    assert.equal(splitter.pendingBytes, 6 + chunks * chunk.length);
    const [event] = splitter.push(Buffer.from('\n\n'));
    const total = 6 + chunks * chunk.length + 2;
    assert.equal(event?.length, total);
    // An LF search and a CR search over each byte once; re-scanning what is held would be ~chunks/2 times that.
    assert.ok(splitter.scanned <= 2 * total, `scanned ${splitter.scanned} bytes for a ${total}-byte event`);
    assert.ok(splitter.copied <= total, `copied ${splitter.copied} bytes for a ${total}-byte event`);
  });
});

describe('relayEvents', () => {
  it('relays an event ended by LF then CRLF before the next one comes', { timeout: 180_000 }, async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    async function* upstream(): AsyncGenerator<Buffer> {
      yield Buffer.from(`${ok(1)}\n\r\n`);
      await gate; // released only once the first event is out: a held event hangs the test
      yield Buffer.from(`${ok(2)}\n\n`);
    }
    const relay = relayEvents(upstream(), 1, bodies, hooks);
    const first = await relay.next();
    assert.equal(String(first.value), `${ok(1)}\n\r\n`);
    release();
    const rest: string[] = [];
    for await (const event of relay) rest.push(String(event));
    assert.deepEqual(rest, [`${ok(2)}\n\n`]);
  });

  it('checks each event on its own: two halves of a JSON-RPC response split by LF CRLF are not one event', async () => {
    let aborted: Error | undefined;
    async function* upstream(): AsyncGenerator<Buffer> {
      yield Buffer.from('data: {"jsonrpc":"2.0","id":1,\n\r\ndata: "result":{}}\n\n');
    }
    const out: string[] = [];
    for await (const event of relayEvents(upstream(), 1, bodies, { ...hooks, abortUpstream: (err) => (aborted = err) })) out.push(String(event));
    assert.equal(out.length, 1);
    assert.match(out[0]!, /^event: error\n/);
    assert.match(out[0]!, /not a JSON-RPC response/);
    assert.ok(aborted, 'the upstream request was ended');
  });

  it('an event not yet whole counts among the bodies being read: let go for a fresher one, the relay ends with an error event and the upstream is ended', { timeout: 180_000 }, async () => {
    const small = new ReadingBodies(1000);
    let aborted: Error | undefined;
    let stall!: () => void;
    const stalled = new Promise<void>((resolve) => (stall = resolve));
    // The upstream's body, as undici's: ending the request fails its iteration.
    let fail!: (err: Error) => void;
    const ended = new Promise<void>((_, reject) => (fail = reject));
    async function* upstream(): AsyncGenerator<Buffer> {
      yield Buffer.from(`${ok(1)}\n\n`);
      yield Buffer.from(`data: ${'x'.repeat(600)}`); // an event not yet whole
      stall();
      await ended; // and nothing more: only the let-go ends it
    }
    const relay = relayEvents(upstream(), 1, small, { ...hooks, letGo: () => 'let go', abortUpstream: (err) => fail((aborted = err)) });
    const out: string[] = [String((await relay.next()).value)];
    const rest = (async () => {
      for await (const event of relay) out.push(String(event));
    })();
    await stalled;
    // 606 bytes held as one chunk: its bytes and what holding a chunk costs.
    assert.equal(small.bytes, 606 + HELD_CHUNK_COST);
    // Another answer that sends now, and would pass the cap with it: the stalled event goes.
    const other = small.begin('answer', () => assert.fail('the body sending is never the one let go'));
    small.holds(other, 600);
    assert.equal(small.bytes, 600);
    assert.ok(aborted, 'the upstream request was ended');
    small.end(other);
    await rest;
    assert.equal(out[0], `${ok(1)}\n\n`);
    assert.equal(out.length, 2);
    assert.match(out[1]!, /^event: error\n.*let go/s);
  });
});
