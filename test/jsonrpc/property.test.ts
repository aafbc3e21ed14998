import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { z } from 'zod';
import { Dispatcher, RpcError, parseFrame, serializeFrame } from '../../main/jsonrpc/index.js';
import { exchange, transportKinds } from './harness.js';

const id = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }));
const call = fc.record({
  id,
  method: fc.constantFrom('echo', 'add', 'fail', 'missing'),
  params: fc.oneof(fc.constant(undefined), fc.array(fc.integer(), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 4 }), fc.integer())),
});
const batch = fc.array(call, { minLength: 1, maxLength: 12 }).map((calls) =>
  JSON.stringify(calls.map(({ id, method, params }) => (params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params }))),
);

function dispatcher(): Dispatcher {
  return new Dispatcher()
    .onRequest('echo', async (params) => params ?? null)
    .onRequest('add', z.array(z.number()), (numbers) => numbers.reduce((a, b) => a + b, 0))
    .onRequest('fail', () => {
      throw RpcError.internalError('planned');
    });
}

const idsOf = (text: string) => (JSON.parse(text) as Array<{ id: unknown }>).map((entry) => entry.id);

test('any batch of valid requests is answered with exactly its ids, in order', async () => {
  await fc.assert(
    fc.asyncProperty(batch, async (text) => {
      const answer = await dispatcher().dispatch(parseFrame(text));
      assert.ok(answer?.kind === 'batch');
      assert.deepEqual(idsOf(serializeFrame(answer)), idsOf(text));
    }),
    { numRuns: 200 },
  );
});

for (const kind of transportKinds) {
  test(`the same holds end to end over ${kind.name}`, async () => {
    await fc.assert(
      fc.asyncProperty(batch, async (text) => {
        const answers = await exchange(kind, dispatcher(), text);
        assert.equal(answers.length, 1);
        assert.deepEqual(idsOf(JSON.stringify(answers[0])), idsOf(text));
      }),
      { numRuns: 25 },
    );
  });
}
