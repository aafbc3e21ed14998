/**
 * The quick envelope check (main/jsonrpc/quick-message.ts) against bodies a hostile client would
 * write by hand: each decodes, single and in a batch, exactly as `MessageSchema` decodes it (the
 * same acceptance, the same value, `-0` and NUL included), and nesting far deeper than any
 * recursive check could follow decodes without a stack overflow.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MessageSchema, frameFromJson, parseFrame } from '../../main/jsonrpc/index.js';
import { quickMessage } from '../../main/jsonrpc/quick-message.js';

const HOSTILE = [
  // JSON.parse keeps the last of duplicate keys: both checks see the same object.
  '{"jsonrpc":"2.0","id":1,"id":"x\\u0000y","method":"a","method":"b","params":[1],"params":{"k":1}}',
  '{"jsonrpc":"2.0","jsonrpc":"2.0 ","id":1,"method":"m"}',
  '{"jsonrpc":"2.0 ","id":1,"method":"m"}',
  '{"jsonrpc":"2.0","id":-0,"method":"m"}',
  '{"jsonrpc":"2.0","id":1.5e-300,"method":"m"}',
  '{"jsonrpc":"2.0","id":-1e400,"method":"m"}',
  '{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}',
  '{"jsonrpc":"2.0","id":"\\u0000","method":"\\u0000\\u001b[2J\\r\\n"}',
  '{"jsonrpc":"2.0","id":true,"method":"m"}',
  '{"jsonrpc":"2.0","id":[1],"method":"m"}',
  '{"jsonrpc":"2.0","id":{},"method":"m"}',
  '{"jsonrpc":"2.0","id":1,"method":1}',
  '{"jsonrpc":2,"id":1,"method":"m"}',
  '{"jsonrpc":"2.0","id":1,"method":"m","params":[]}',
  '{"jsonrpc":"2.0","id":1,"method":"m","params":[{"__proto__":{"polluted":1}}]}',
  '{"jsonrpc":"2.0","method":"m","params":{"__proto__":null}}',
  '{"jsonrpc":"2.0","method":"m","params":{"constructor":1,"prototype":2,"hasOwnProperty":3}}',
  '{"__proto__":{"jsonrpc":"2.0","method":"m"}}',
  '{"__proto__":{"id":1},"jsonrpc":"2.0","method":"m"}',
  '{"constructor":{},"jsonrpc":"2.0","method":"m"}',
  '{"jsonrpc":"2.0","id":1,"method":"m","params":{},"result":1}',
  '{"jsonrpc":"2.0","id":1,"method":"m","error":{"code":1,"message":"x"}}',
  '{"jsonrpc":"2.0","id":null,"method":"m"}',
  '{"jsonrpc":"2.0","method":"m","params":true}',
];

/** What zod alone makes of the value: the message, or undefined. */
function zodMessage(value: unknown): unknown {
  const parsed = MessageSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

test('hand-written hostile envelopes decode as MessageSchema decodes them, single and in a batch', () => {
  for (const text of HOSTILE) {
    const value: unknown = JSON.parse(text);
    const expected = zodMessage(value);
    const quick = quickMessage(value);
    if (quick !== undefined) assert.ok(expected !== undefined, `the quick check accepted what zod refuses: ${text}`);
    const single = parseFrame(text);
    assert.deepStrictEqual(single.kind === 'message' ? single.message : undefined, expected, text);
    const batch = parseFrame(`[${text},${text}]`);
    assert.ok(batch.kind === 'batch', text);
    for (const entry of batch.entries) assert.deepStrictEqual(entry.kind === 'message' ? entry.message : undefined, expected, text);
  }
  // -0 stays -0 (deepStrictEqual tells it from 0), as zod leaves it.
  const minusZero = parseFrame('{"jsonrpc":"2.0","id":-0,"method":"m"}');
  assert.ok(minusZero.kind === 'message' && 'id' in minusZero.message && Object.is(minusZero.message.id, -0));
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined, 'no prototype was polluted');
});

test('params nested 200 000 deep decode without a stack overflow (no check walks into params)', () => {
  const depth = 200_000;
  const text = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}}`;
  // parseFrame refuses such text before parsing it (frame-nesting.test.ts); a value parsed elsewhere still decodes.
  assert.equal(parseFrame(text).kind, 'malformed');
  const frame = frameFromJson(JSON.parse(text));
  assert.equal(frame.kind, 'message');
  const batch = frameFromJson(JSON.parse(`[${text}]`));
  assert.ok(batch.kind === 'batch' && batch.entries[0]!.kind === 'message');
});
