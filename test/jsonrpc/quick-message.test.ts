/**
 * The quick check of a request or notification envelope (main/jsonrpc/quick-message.ts) against
 * the zod schema it stands before: over generated values, valid and mutated, whatever the quick
 * check accepts `MessageSchema` accepts with the same value (keys in the same order), and every
 * valid request and notification is accepted (so the fast path is taken, not just never wrong).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MessageSchema, frameFromJson, parseFrame } from '../../main/jsonrpc/index.js';
import { quickMessage } from '../../main/jsonrpc/quick-message.js';

type Json = Record<string, unknown>;

// Numbers as a client's text would parse: -0, 3.0, out of the safe range, fractions, Infinity (1e400).
const edgeNumber = fc.constantFrom('-0', '0', '3', '3.0', '1e3', '1.5', '-1', '9007199254740993', '1e400', '-1e400').map((t) => JSON.parse(t) as number);
const text = fc.string({ maxLength: 8 });
const requestId = fc.oneof(fc.integer(), edgeNumber, text);
const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  edgeNumber,
  fc.constantFrom('2.0', '2', 2, 'tools/call', null, true),
  fc.constant(null).map(() => ({})), // a fresh object each time: a shared one would turn cyclic under the mutations
);
const KEYS = ['jsonrpc', 'id', 'method', 'params', 'result', 'error', 'code', 'message', 'data', 'name', 'arguments', '__proto__', 'constructor', 'toString', 'hasOwnProperty'];
const key = fc.oneof(fc.constantFrom(...KEYS), text);
const params = fc.oneof(fc.dictionary(text, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }), fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }));

const requestOver = (ids: fc.Arbitrary<unknown>) =>
  fc.record({ jsonrpc: fc.constant('2.0'), id: ids, method: text, params }, { requiredKeys: ['jsonrpc', 'id', 'method'] });
const notification = fc.record({ jsonrpc: fc.constant('2.0'), method: text, params }, { requiredKeys: ['jsonrpc', 'method'] });
const response = fc.oneof(
  fc.record({ jsonrpc: fc.constant('2.0'), id: requestId, result: fc.jsonValue({ maxDepth: 1 }) }),
  fc.record({ jsonrpc: fc.constant('2.0'), id: fc.option(requestId, { nil: null }), error: fc.record({ code: fc.integer(), message: text }) }),
);
const message = fc.oneof(requestOver(requestId), notification, response);

/** One change to a value or to its params: a key removed, or set (own, even `__proto__`). */
const mutation = fc.record({ inner: fc.boolean(), remove: fc.boolean(), key, value: anyValue });
type Mutation = { inner: boolean; remove: boolean; key: string; value: unknown };

function mutate(value: Json, changes: Mutation[]): Json {
  for (const change of changes) {
    const inner = value.params;
    const target = change.inner && typeof inner === 'object' && inner !== null ? (inner as Json) : value;
    // An array's `length` cannot be redefined (nor deleted), and no parsed body has it as a key: no change.
    if (Array.isArray(target) && change.key === 'length') continue;
    if (change.remove) delete target[change.key];
    else Object.defineProperty(target, change.key, { value: change.value, enumerable: true, writable: true, configurable: true });
  }
  return value;
}

/** A value as the gateway sees it: `JSON.parse` of the body's text (a `__proto__` key stays an own key). */
const parsed = (value: Json): unknown => JSON.parse(JSON.stringify(value));

function assertAgrees(input: unknown): void {
  const quick = quickMessage(input);
  if (quick === undefined) return;
  const zod = MessageSchema.safeParse(input);
  assert.ok(zod.success, `the quick check accepted what zod refuses: ${JSON.stringify(input)}`);
  assert.deepStrictEqual(quick, zod.data);
  assert.equal(JSON.stringify(quick), JSON.stringify(zod.data));
}

const RUNS = Number(process.env.QM_RUNS ?? 5000);

test('a quick-checked message is what MessageSchema makes of it, over valid and mutated values', () => {
  fc.assert(
    fc.property(message, fc.array(mutation, { maxLength: 3 }), (value, changes) => assertAgrees(parsed(mutate(value, changes)))),
    { numRuns: RUNS },
  );
});

test('the quick check agrees with MessageSchema on any JSON value and on edge cases', () => {
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 3 }), (value) => assertAgrees(value)), { numRuns: 2000 });
  for (const text of [
    '{"jsonrpc":"2.0","id":1,"method":"m","params":{"__proto__":{"x":1},"a":1}}',
    '{"jsonrpc":"2.0","id":1,"method":"m","__proto__":{}}',
    '{"jsonrpc":"2.0","id":1e400,"method":"m"}',
    '{"jsonrpc":"2.0","id":null,"method":"m"}',
    '{"jsonrpc":"2.0","id":1,"method":"m","params":null}',
    '{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}',
    '{"jsonrpc":"2.0","method":"m","params":{"constructor":{"prototype":1}}}',
  ]) assertAgrees(JSON.parse(text));
});

test('every valid request and notification takes the quick path', () => {
  fc.assert(
    fc.property(fc.oneof(requestOver(fc.oneof(fc.integer(), text)), notification), (value) => {
      assert.notEqual(quickMessage(parsed(value)), undefined, JSON.stringify(value));
    }),
    { numRuns: RUNS },
  );
});

test('a frame decodes to the same message with or without the quick check, single and in a batch', () => {
  fc.assert(
    fc.property(message, fc.array(mutation, { maxLength: 2 }), (value, changes) => {
      const input = parsed(mutate(value, changes));
      const zod = MessageSchema.safeParse(input);
      const single = frameFromJson(input);
      assert.deepStrictEqual(single.kind === 'message' ? single.message : undefined, zod.success ? zod.data : undefined);
      const batch = parseFrame(JSON.stringify([input]));
      assert.ok(batch.kind === 'batch');
      assert.deepStrictEqual(batch.entries[0], zod.success ? { kind: 'message', message: zod.data } : { kind: 'malformed', value: input });
    }),
    { numRuns: 2000 },
  );
});
