import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { Dispatcher } from '../../main/jsonrpc/index.js';
import { deferred, exchange, failure, notification, request, result, serveRaw, transportKinds } from './harness.js';

// One test per JSON-RPC batch rule the gateway follows, each over every transport.

/** A handler set that records the order in which handlers were invoked. */
function recording() {
  const calls: string[] = [];
  const dispatcher = new Dispatcher()
    .onRequest('echo', (params) => params ?? null)
    .onRequest('record', z.tuple([z.string()]), ([tag]) => {
      calls.push(tag);
      return tag;
    })
    .onNotification('note', z.tuple([z.string()]), ([tag]) => {
      calls.push(tag);
    });
  return { calls, dispatcher };
}

for (const kind of transportKinds) {
  describe(`batch over ${kind.name}`, () => {
    test('entries are validated and dispatched in source order', async () => {
      const { calls, dispatcher } = recording();
      const batch = `[${request(1, 'record', ['a'])}, ${notification('note', ['b'])}, ${request(2, 'record', [3])}, ${request(3, 'record', ['c'])}]`;
      const answers = await exchange(kind, dispatcher, batch);
      assert.deepEqual(calls, ['a', 'b', 'c']);
      const [answer] = answers as [Array<{ id: unknown; error?: { code: number } }>];
      assert.deepEqual(
        answer.map((a) => [a.id, a.error?.code]),
        [
          [1, undefined],
          [2, -32602],
          [3, undefined],
        ],
      );
    });

    test('one response array, in source order, only after every response-bearing entry completed', async () => {
      const fastDone = deferred();
      const dispatcher = new Dispatcher()
        .onRequest('slow', async () => {
          await fastDone.promise; // finishes strictly after its later sibling
          return 'slow';
        })
        .onRequest('fast', () => {
          fastDone.resolve();
          return 'fast';
        });
      const answers = await exchange(kind, dispatcher, `[${request(1, 'slow')}, ${request(2, 'fast')}]`);
      assert.deepEqual(answers, [[result(1, 'slow'), result(2, 'fast')]]);
    });

    test('a notification-only batch gets no response at all', async () => {
      const { calls, dispatcher } = recording();
      const answers = await exchange(kind, dispatcher, `[${notification('note', ['x'])}, ${notification('note', ['y'])}, ${notification('unknown')}]`);
      assert.deepEqual(answers, []);
      assert.deepEqual(calls, ['x', 'y']);
    });

    test('an empty array is answered with one standalone Invalid Request', async () => {
      const answers = await exchange(kind, recording().dispatcher, '[]');
      assert.deepEqual(answers, [failure(null, -32600, 'Invalid Request')]);
    });

    test('an invalid call-shaped entry gets its own Invalid Request and its siblings still run', async () => {
      const { calls, dispatcher } = recording();
      const batch = [
        request(1, 'record', ['first']),
        '{"jsonrpc":"1.0","id":2,"method":"record","params":["wrong version"]}',
        '{"jsonrpc":"2.0","method":1,"params":"bar"}',
        '{"jsonrpc":"2.0","id":4,"method":"record","params":5}',
        '7',
        request(6, 'record', ['last']),
      ];
      const answers = await exchange(kind, dispatcher, `[${batch.join(',')}]`);
      assert.deepEqual(answers, [
        [result(1, 'first'), failure(2, -32600, 'Invalid Request'), failure(null, -32600, 'Invalid Request'), failure(4, -32600, 'Invalid Request'), failure(null, -32600, 'Invalid Request'), result(6, 'last')],
      ]);
      assert.deepEqual(calls, ['first', 'last']);
    });

    test('response entries are routed by id or ignored, never answered', async () => {
      const { peer, server, dispose } = await serveRaw(kind, recording().dispatcher);
      try {
        const asked = server.request('peer/question', ['?']);
        const question = (await peer.next()) as { id: number };
        const batch = [
          JSON.stringify(result(question.id, 'the answer')),
          '{"jsonrpc":"2.0","id":77,"result":1,"error":{"code":1,"message":"both"}}', // malformed, response-shaped
          JSON.stringify(result(404, 'names nothing pending')),
          request('e', 'echo', ['still answered']),
        ];
        await peer.send(`[${batch.join(',')}]`);
        assert.equal(await asked, 'the answer');
        assert.deepEqual(await peer.finish(), [[result('e', ['still answered'])]]);
      } finally {
        await dispose();
      }
    });

    test('a batch of responses only gets no response', async () => {
      const answers = await exchange(kind, recording().dispatcher, `[${JSON.stringify(result(1, 'x'))}, ${JSON.stringify(failure(2, -1, 'no'))}]`);
      assert.deepEqual(answers, []);
    });
  });
}
