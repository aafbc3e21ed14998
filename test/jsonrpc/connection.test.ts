import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { ConnectionClosedError, Dispatcher, RequestTimeoutError, RpcError } from '../../main/jsonrpc/index.js';
import { connectPair, deferred, transportKinds } from './harness.js';

for (const kind of transportKinds) {
  describe(`Connection over ${kind.name}`, () => {
    test('correlates each response with its request', async () => {
      const server = new Dispatcher().onRequest('add', z.tuple([z.number(), z.number()]), ([a, b]) => a + b);
      const { client, dispose } = await connectPair(kind, server);
      try {
        const sums = await Promise.all([1, 2, 3, 4, 5].map((n) => client.request('add', [n, 100])));
        assert.deepEqual(sums, [101, 102, 103, 104, 105]);
      } finally {
        await dispose();
      }
    });

    test('out-of-order responses reach the right callers', async () => {
      const secondAnswered = deferred();
      const answeredOrder: string[] = [];
      const server = new Dispatcher()
        .onRequest('first', async () => {
          await secondAnswered.promise;
          return 'first';
        })
        .onRequest('second', () => 'second');
      const { client, dispose } = await connectPair(kind, server);
      try {
        const first = client.request('first').then((value) => (answeredOrder.push('first'), value));
        const second = client.request('second').then((value) => (answeredOrder.push('second'), secondAnswered.resolve(), value));
        assert.deepEqual(await Promise.all([first, second]), ['first', 'second']);
        assert.deepEqual(answeredOrder, ['second', 'first']);
      } finally {
        await dispose();
      }
    });

    test('both sides can call each other on one connection', async () => {
      const clientSide = new Dispatcher().onRequest('whoami', () => 'client');
      let serverConnectionRequest: (() => Promise<unknown>) | undefined;
      const server = new Dispatcher().onRequest('ask-back', () => serverConnectionRequest?.());
      const { client, server: serverConnection, dispose } = await connectPair(kind, server, clientSide);
      serverConnectionRequest = () => serverConnection.request('whoami');
      try {
        assert.equal(await client.request('ask-back'), 'client');
      } finally {
        await dispose();
      }
    });

    test('close rejects every pending call and aborts running handlers', async () => {
      const started = deferred();
      const aborted = deferred<unknown>();
      const server = new Dispatcher().onRequest('hang', (_params, { signal }) => {
        signal.addEventListener('abort', () => aborted.resolve(signal.reason));
        started.resolve();
        return new Promise(() => {});
      });
      const { client, server: serverConnection, dispose } = await connectPair(kind, server);
      try {
        const calls = [client.request('hang'), client.request('hang')];
        await started.promise;
        client.close();
        for (const call of calls) await assert.rejects(call, ConnectionClosedError);
        await assert.rejects(client.request('hang'), ConnectionClosedError);
        await assert.rejects(client.notify('anything'), ConnectionClosedError);
        assert.equal(await client.closed, undefined);
        serverConnection.close();
        assert.ok((await aborted.promise) instanceof ConnectionClosedError);
      } finally {
        await dispose();
      }
    });

    test('the peer ending its side rejects calls that can no longer be answered', async () => {
      const asked = deferred();
      const clientSide = new Dispatcher().onRequest('never-answered', () => {
        asked.resolve();
        return new Promise(() => {});
      });
      const { client, server, dispose } = await connectPair(kind, new Dispatcher(), clientSide);
      try {
        const pending = server.request('never-answered');
        await asked.promise;
        client.close();
        await assert.rejects(pending, ConnectionClosedError);
        assert.equal(await server.closed, undefined);
      } finally {
        await dispose();
      }
    });

    test('an error answer rejects with RpcError keeping code, message and data', async () => {
      const server = new Dispatcher().onRequest('refuse', () => {
        throw new RpcError(-32000, 'credit refused: balance too low', { balance: 0 });
      });
      const { client, dispose } = await connectPair(kind, server);
      try {
        await assert.rejects(client.request('refuse'), (error: unknown) => {
          assert.ok(error instanceof RpcError);
          assert.deepEqual([error.code, error.message, error.data], [-32000, 'credit refused: balance too low', { balance: 0 }]);
          return true;
        });
      } finally {
        await dispose();
      }
    });

    test('a result schema types and checks the answer', async () => {
      const server = new Dispatcher().onRequest('card', () => ({ name: 'echo', version: 2 }));
      const { client, dispose } = await connectPair(kind, server);
      try {
        const card = await client.request('card', undefined, { result: z.object({ name: z.string() }) });
        assert.equal(card.name, 'echo');
        await assert.rejects(client.request('card', undefined, { result: z.object({ name: z.number() }) }), z.ZodError);
      } finally {
        await dispose();
      }
    });

    test('a call past its deadline rejects with RequestTimeoutError; an aborted call with the reason', async () => {
      const server = new Dispatcher().onRequest('hang', () => new Promise(() => {}));
      const { client, dispose } = await connectPair(kind, server);
      try {
        await assert.rejects(client.request('hang', undefined, { timeoutMs: 5 }), RequestTimeoutError);
        const controller = new AbortController();
        const call = client.request('hang', undefined, { signal: controller.signal });
        controller.abort(new Error('caller gave up'));
        await assert.rejects(call, /caller gave up/);
      } finally {
        await dispose();
      }
    });

    test('notifications reach their handler; params and id are as sent', async () => {
      const heard = deferred<[unknown, unknown]>();
      const server = new Dispatcher().onNotification('notifications/initialized', (params, { id }) => heard.resolve([params, id]));
      const { client, dispose } = await connectPair(kind, server);
      try {
        await client.notify('notifications/initialized', { ready: true });
        assert.deepEqual(await heard.promise, [{ ready: true }, undefined]);
      } finally {
        await dispose();
      }
    });
  });
}
