/**
 * The quick checks of a call's frames (main/fabric/wire/quick-worker-frames.ts) against the zod
 * schemas they stand before: over generated frames, valid and mutated, whatever a quick check
 * accepts the schema accepts with the same value (keys in the same order, defaults filled), and
 * the common shapes are accepted (so the fast path is taken, not just never wrong).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { FROM_WORKER } from '../../main/fabric/index.js';
import { quickResultEnvelope, quickTaskOutcome, quickWorkerMessage } from '../../main/fabric/wire/quick-worker-frames.js';

type Json = Record<string, unknown>;

// Numbers as a peer's text would parse: -0, 3.0, out of the safe range, fractions, negatives.
const edgeNumber = fc.constantFrom('-0', '0', '3', '3.0', '1e3', '1.5', '-1', '9007199254740991', '9007199254740993', '1e400').map((t) => JSON.parse(t) as number);
const requestId = fc.oneof(fc.nat(), edgeNumber);
const text = fc.string({ maxLength: 8 });
const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  edgeNumber,
  fc.constantFrom('artifact', 'status', 'working', 'submitted', 'completed', 'failed', 'canceled', 'input-required', 'task.event', 'agent.invoke', 'task.run', true, false, null, 3),
);
const KEYS = ['v', 'id', 'method', 'params', 'result', 'kind', 'text', 'lastChunk', 'state', 'message', 'metadata', 'agent', 'prompt', 'handle', 'include_trace', 'spawn_context', '__proto__', 'constructor', 'toString'];
const key = fc.oneof(fc.constantFrom(...KEYS), text);

// Each shape over ids from `ids`: any numbers for the agreement, valid ones for the coverage.
const artifact = (ids: fc.Arbitrary<number>) => fc.record(
  { kind: fc.constant('artifact'), id: ids, text, lastChunk: fc.boolean() },
  { requiredKeys: ['kind', 'id', 'text'] },
);
const status = (ids: fc.Arbitrary<number>) => fc.record(
  { kind: fc.constant('status'), id: ids, state: fc.constantFrom('submitted', 'working'), message: text },
  { requiredKeys: ['kind', 'id', 'state'] },
);
const invoke = fc.record(
  {
    agent: text,
    prompt: text,
    handle: fc.option(text, { nil: null }),
    include_trace: fc.boolean(),
    spawn_context: fc.record({ roster: fc.array(text, { maxLength: 2 }), endpoint: text }, { requiredKeys: [] }),
  },
  { requiredKeys: ['agent', 'prompt'] },
);
const outcome = fc.record(
  { state: fc.constantFrom('completed', 'failed', 'canceled'), message: text, metadata: fc.record({ trace: text }, { requiredKeys: [] }) },
  { requiredKeys: ['state'] },
);

const messageOver = (ids: fc.Arbitrary<number>) => fc.oneof(
  fc.oneof(artifact(ids), status(ids)).map((params): Json => ({ v: 3, method: 'task.event', params })),
  fc.tuple(ids, invoke).map(([id, params]): Json => ({ v: 3, id, method: 'agent.invoke', params })),
);
const resultOver = (ids: fc.Arbitrary<number>) => fc.tuple(ids, outcome).map(([id, result]): Json => ({ v: 3, id, result }));
const message = messageOver(requestId);
const resultFrame = resultOver(requestId);

/** One change to a frame or to its inner object: a key removed, or set (own, even `__proto__`). */
const mutation = fc.record({ inner: fc.boolean(), remove: fc.boolean(), key, value: anyValue });
type Mutation = { inner: boolean; remove: boolean; key: string; value: unknown };

function mutate(frame: Json, changes: Mutation[]): Json {
  for (const change of changes) {
    const inner = frame.params ?? frame.result;
    const target = change.inner && typeof inner === 'object' && inner !== null ? (inner as Json) : frame;
    if (change.remove) delete target[change.key];
    else Object.defineProperty(target, change.key, { value: change.value, enumerable: true, writable: true, configurable: true });
  }
  return frame;
}

/** A frame as the codec sees it: the value of `JSON.parse` on its text. */
const parsed = (frame: Json): Json => JSON.parse(JSON.stringify(frame)) as Json;

/** Whatever `quick` accepts, `schema` accepts with the same value, key order included. */
function assertAgrees(quick: unknown, schema: { safeParse(value: unknown): { success: boolean; data?: unknown } }, input: unknown): void {
  if (quick === undefined) return;
  const zod = schema.safeParse(input);
  assert.ok(zod.success, `the quick check accepted what zod refuses: ${JSON.stringify(input)}`);
  assert.deepStrictEqual(quick, zod.data);
  assert.equal(JSON.stringify(quick), JSON.stringify(zod.data));
}

const RUNS = 4000;

test('a quick-checked message is what the WorkerMessage schema makes of it, over valid and mutated frames', () => {
  fc.assert(
    fc.property(message, fc.array(mutation, { maxLength: 3 }), (frame, changes) => {
      const input = parsed(mutate(frame, changes));
      assertAgrees(quickWorkerMessage(input), FROM_WORKER.messages, input);
    }),
    { numRuns: RUNS },
  );
});

test('a quick-checked result frame and task.run outcome are what ResultEnvelope and TaskOutcome make of them', () => {
  fc.assert(
    fc.property(resultFrame, fc.array(mutation, { maxLength: 3 }), (frame, changes) => {
      const input = parsed(mutate(frame, changes));
      const envelope = quickResultEnvelope(input);
      assertAgrees(envelope, FROM_WORKER.resultEnvelope, input);
      assertAgrees(quickTaskOutcome(input.result), FROM_WORKER.results['task.run']!, input.result);
    }),
    { numRuns: RUNS },
  );
});

test('the quick checks take every valid call frame without a spawn context or metadata', () => {
  fc.assert(
    fc.property(messageOver(fc.nat()), resultOver(fc.nat()), (frame, result) => {
      const params = frame.params as Json;
      if (params.spawn_context === undefined) assert.notEqual(quickWorkerMessage(parsed(frame)), undefined, JSON.stringify(frame));
      assert.notEqual(quickResultEnvelope(parsed(result)), undefined);
      if ((result.result as Json).metadata === undefined) assert.notEqual(quickTaskOutcome(parsed(result).result), undefined);
    }),
    { numRuns: RUNS },
  );
});

test('the quick checks refuse (leave to zod) what zod refuses, on hand-picked frames', () => {
  const refused: Json[] = [
    { v: 3, method: 'task.event', params: { kind: 'artifact', id: 1, text: 'x', lastChunk: 'yes' } },
    { v: 3, method: 'task.event', params: { kind: 'artifact', id: -1, text: 'x' } },
    { v: 3, method: 'task.event', params: { kind: 'artifact', id: 1.5, text: 'x' } },
    { v: 3, method: 'task.event', params: { kind: 'status', id: 1, state: 'completed' } },
    { v: 3, method: 'task.event', id: 4, params: { kind: 'artifact', id: 1, text: 'x' } },
    { v: 3, id: 2, method: 'agent.invoke', params: { agent: 'b', prompt: 'p', extra: 1 } },
    { v: 2, id: 2, method: 'agent.invoke', params: { agent: 'b', prompt: 'p' } },
  ];
  for (const frame of refused) {
    assert.equal(quickWorkerMessage(frame), undefined, JSON.stringify(frame));
    assert.equal(FROM_WORKER.messages.safeParse(frame).success, false, JSON.stringify(frame));
  }
  const withProto = JSON.parse('{"state":"completed","__proto__":{"x":1}}') as Json;
  assert.equal(quickTaskOutcome(withProto), undefined);
  assert.equal(FROM_WORKER.results['task.run']!.safeParse(withProto).success, false);
});
