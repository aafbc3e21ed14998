import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { Dispatcher, RpcError } from '../../main/jsonrpc/index.js';
import { exchange, failure, request, transportKinds } from './harness.js';

for (const kind of transportKinds) {
  describe(`error answers over ${kind.name}`, () => {
    test('input that is not JSON gets -32700 under id null', async () => {
      const answers = await exchange(kind, new Dispatcher(), '{"jsonrpc": "2.0", "method": "x", ', '[{"jsonrpc":"2.0","method":"a"},');
      assert.deepEqual(answers, [failure(null, -32700, 'Parse error'), failure(null, -32700, 'Parse error')]);
    });

    test('malformed standalone values: call-shaped get -32600 (with their id when readable), response-shaped get nothing', async () => {
      const answers = await exchange(
        kind,
        new Dispatcher().onRequest('x', () => 1),
        '{"jsonrpc":"2.0","id":5,"method":3}',
        '{"jsonrpc":"2.0","id":6,"method":"x","extra":true}',
        '{"jsonrpc":"2.0","id":null,"method":"x"}',
        '42',
        '{"jsonrpc":"2.0","id":7,"result":1,"error":{"code":1,"message":"both"}}',
        '{"jsonrpc":"2.0","id":8,"error":{"code":"not a number","message":"m"}}',
      );
      assert.deepEqual(answers, [
        failure(5, -32600, 'Invalid Request'),
        failure(6, -32600, 'Invalid Request'),
        failure(null, -32600, 'Invalid Request'),
        failure(null, -32600, 'Invalid Request'),
      ]);
    });

    test('an unknown method gets -32601; an unknown notification gets nothing', async () => {
      const answers = await exchange(kind, new Dispatcher(), request(1, 'tools/missing'), '{"jsonrpc":"2.0","method":"notifications/missing"}');
      assert.deepEqual(answers, [failure(1, -32601, 'Method not found')]);
    });

    test('params failing the registered schema get -32602 naming the problem, and the handler never runs', async () => {
      let ran = false;
      const dispatcher = new Dispatcher().onRequest('tools/call', z.object({ name: z.string(), arguments: z.record(z.string(), z.unknown()).optional() }), () => {
        ran = true;
      });
      const answers = (await exchange(kind, dispatcher, request(1, 'tools/call', { arguments: {} }), request(2, 'tools/call'))) as Array<{
        id: number;
        error: { code: number; message: string; data: { issues: Array<{ path: string[] }> } };
      }>;
      assert.equal(ran, false);
      assert.deepEqual(answers.map((a) => [a.error.code, a.error.message]), [
        [-32602, 'Invalid params'],
        [-32602, 'Invalid params'],
      ]);
      assert.deepEqual(answers.find((a) => a.id === 1)?.error.data.issues[0]?.path, ['name']);
    });

    test('a handler that throws gets -32603 without its internals; an RpcError keeps its code, message and data', async () => {
      const reported: Array<[string, unknown]> = [];
      const dispatcher = new Dispatcher({ onHandlerError: (error, method) => reported.push([method, error]) })
        .onRequest('leaky', () => {
          throw new Error('password=hunter2 at /srv/db.ts:12');
        })
        .onRequest('leaky-async', async () => Promise.reject(new TypeError('stack and secrets')))
        .onRequest('unknown-tool', () => {
          throw RpcError.invalidParams("unknown tool 'nope'", { tool: 'nope' });
        });
      const answers = await exchange(kind, dispatcher, request(1, 'leaky'), request(2, 'leaky-async'), request(3, 'unknown-tool'));
      const byId = new Map((answers as Array<{ id: number }>).map((a) => [a.id, a]));
      assert.deepEqual(byId.get(1), failure(1, -32603, 'Internal error'));
      assert.deepEqual(byId.get(2), failure(2, -32603, 'Internal error'));
      assert.deepEqual(byId.get(3), { jsonrpc: '2.0', id: 3, error: { code: -32602, message: "unknown tool 'nope'", data: { tool: 'nope' } } });
      assert.deepEqual(
        reported.map(([method, error]) => [method, (error as Error).message]).sort(),
        [
          ['leaky', 'password=hunter2 at /srv/db.ts:12'],
          ['leaky-async', 'stack and secrets'],
        ],
      );
    });

    test('a handler returning nothing answers result null', async () => {
      const answers = await exchange(kind, new Dispatcher().onRequest('void', () => {}), request('v', 'void'));
      assert.deepEqual(answers, [{ jsonrpc: '2.0', id: 'v', result: null }]);
    });
  });
}

describe('RpcError', () => {
  test('one factory per standard code', () => {
    assert.deepEqual(
      [RpcError.parseError(), RpcError.invalidRequest(), RpcError.methodNotFound(), RpcError.invalidParams(), RpcError.internalError()].map((e) => [e.code, e.message]),
      [
        [-32700, 'Parse error'],
        [-32600, 'Invalid Request'],
        [-32601, 'Method not found'],
        [-32602, 'Invalid params'],
        [-32603, 'Internal error'],
      ],
    );
  });

  test('round-trips through its wire object', () => {
    const error = RpcError.fromErrorObject(new RpcError(-32000, 'refused', { why: 'credit' }).toErrorObject());
    assert.deepEqual([error.code, error.message, error.data], [-32000, 'refused', { why: 'credit' }]);
    assert.deepEqual(RpcError.methodNotFound().toErrorObject(), { code: -32601, message: 'Method not found' });
  });
});
