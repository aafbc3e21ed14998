/**
 * A value with the envelope (`"jsonrpc":"2.0"` and a method) and thousands of other members went
 * to zod, whose strict objects list every unknown member in each branch of the message union: a
 * 8 MiB body of one such object took ~2.4× JSON.parse on the gateway's main thread (7.2 s against
 * 3.0 s on a loaded machine), on top of the parse. No message has more than four members
 * (`jsonrpc`, `id`, `method`, `params`; or `result`/`error` for `method`), so a value with more is
 * decided without zod, its members counted once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MessageSchema, frameFromJson, parseFrame } from '../../main/jsonrpc/index.js';

/** How many times zod's MessageSchema is asked while `run` runs. */
function zodAsked(run: () => void): number {
  const original = MessageSchema.safeParse.bind(MessageSchema);
  let asked = 0;
  MessageSchema.safeParse = ((value: unknown) => {
    asked++;
    return original(value);
  }) as typeof MessageSchema.safeParse;
  try {
    run();
  } finally {
    MessageSchema.safeParse = original;
  }
  return asked;
}

test('a value with the envelope and more members than any message has is decided without zod', () => {
  const wide: Record<string, unknown> = { jsonrpc: '2.0', id: 1, method: 'ping' };
  for (let i = 0; i < 1_000; i++) wide[`k${i}`] = i;
  assert.equal(MessageSchema.safeParse(wide).success, false);
  let kind = '';
  const asked = zodAsked(() => {
    kind = frameFromJson(wide).kind;
  });
  assert.equal(kind, 'malformed');
  assert.equal(asked, 0, 'zod was asked');
  // A value with the envelope and an extra member still goes to zod, as before (what it decides is the schema's).
  assert.equal(zodAsked(() => frameFromJson({ jsonrpc: '2.0', id: 1, method: 'm', x: 1 })), 1);
});

test('the same in a batch: each wide entry is malformed, the others decoded', () => {
  const extra = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
  const text = JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'ping', ...extra }, { jsonrpc: '2.0', id: 3, result: {}, ...extra }]);
  const frame = parseFrame(text);
  assert.equal(frame.kind, 'batch');
  assert.deepEqual(frame.entries.map((e) => e.kind), ['message', 'malformed', 'malformed']);
});

test('every message shape (four members at most) is still decided as zod decides it', () => {
  const values: unknown[] = [
    { jsonrpc: '2.0', id: 1, method: 'm', params: {} },
    { jsonrpc: '2.0', id: 1, method: 'm', params: [], x: 1 },
    { jsonrpc: '2.0', id: 'a', result: null },
    { jsonrpc: '2.0', id: null, error: { code: 1, message: 'x' } },
    { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x' }, result: 1 },
    { jsonrpc: '2.0', method: 'n', params: { a: 1 } },
    JSON.parse('{"jsonrpc":"2.0","id":1,"method":"m","__proto__":{}}'),
  ];
  for (const value of values) {
    const frame = frameFromJson(value);
    assert.equal(frame.kind === 'message', MessageSchema.safeParse(value).success, JSON.stringify(value));
  }
});

test('a response whose error object has more members than an error object has is decided without zod', () => {
  // Three top-level members pass the envelope's count; the error object is a strict object too.
  const members = Array.from({ length: 50_000 }, (_, i) => `"k${i}":0`).join(',');
  const text = `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x",${members}}}`;
  let kind = '';
  const asked = zodAsked(() => {
    kind = parseFrame(text).kind;
  });
  assert.equal(kind, 'malformed');
  assert.equal(asked, 0, 'zod was asked');
  // One member more than code, message and data is refused without zod, as zod would refuse it.
  const extra = { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x', data: 1, y: 2 } };
  assert.equal(zodAsked(() => frameFromJson(extra)), 0);
  assert.equal(frameFromJson(extra).kind, MessageSchema.safeParse(extra).success ? 'message' : 'malformed');
  assert.equal(frameFromJson({ jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x', data: [1] } }).kind, 'message');
});
