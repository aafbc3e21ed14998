import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import {
  ConnectionClosedError,
  Connection,
  Dispatcher,
  FramingError,
  LineTooLongError,
  duplexTransport,
  parseFrame,
  streamTransport,
} from '../../main/jsonrpc/index.js';
import { unixSocketPair } from './harness.js';

describe('newline-delimited byte stream transport', () => {
  test('a line over the cap fails the transport with LineTooLongError and closes the connection', async () => {
    const { client, server, dispose } = await unixSocketPair();
    try {
      const connection = new Connection(duplexTransport(server, { maxLineBytes: 64 }), new Dispatcher());
      const pending = connection.request('anything');
      client.write(`{"jsonrpc":"2.0","method":"note","params":["${'x'.repeat(100)}"]}\n`);
      const failure = await connection.closed;
      assert.ok(failure instanceof LineTooLongError);
      assert.equal(failure.maxLineBytes, 64);
      await assert.rejects(pending, (error: unknown) => error instanceof ConnectionClosedError && error.cause === failure);
    } finally {
      await dispose();
    }
  });

  test('a peer that vanishes mid-call neither crashes the process nor leaves the connection open', async () => {
    const { client, server, dispose } = await unixSocketPair();
    try {
      // The answer is written only once the server has read the end and the client is gone.
      const clientGone = Promise.all([once(client, 'close'), once(server, 'end')]);
      const connection = new Connection(
        duplexTransport(server),
        new Dispatcher().onRequest('late', async () => {
          await clientGone;
          return 'x'.repeat(1 << 20); // written to a closed socket
        }),
      );
      client.end('{"jsonrpc":"2.0","id":1,"method":"late"}\n', () => client.destroy());
      assert.equal(await connection.closed, undefined);
    } finally {
      await dispose();
    }
  });

  test('a line exactly at the cap is accepted', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const line = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const connection = new Connection(streamTransport(input, output, { maxLineBytes: Buffer.byteLength(line) }), new Dispatcher().onRequest('ping', () => ({})));
    input.write(`${line}\n`);
    const [answer] = (await once(createInterface({ input: output }), 'line')) as [string];
    assert.deepEqual(JSON.parse(answer), { jsonrpc: '2.0', id: 1, result: {} });
    connection.close();
  });

  test('a standalone malformed frame is relayed as its exact text', async () => {
    const { client, server, dispose } = await unixSocketPair();
    try {
      const text = '{ "jsonrpc" : "2.0",  "id": 1 , "method": 7 }';
      const frame = parseFrame(text);
      assert.equal(frame.kind, 'malformed');
      const lines = createInterface({ input: client });
      await duplexTransport(server).send(frame);
      const [line] = (await once(lines, 'line')) as [string];
      assert.equal(line, text);
    } finally {
      await dispose();
    }
  });

  test('a malformed frame spanning lines is re-encoded when it is JSON and refused when it is not', async () => {
    const output = new PassThrough();
    const transport = streamTransport(new PassThrough(), output);
    await transport.send(parseFrame('{\n"jsonrpc": "1.0"\n}'));
    assert.equal(output.read().toString(), '{"jsonrpc":"1.0"}\n');
    await assert.rejects(transport.send(parseFrame('{\n"not json')), FramingError);
  });

  test('frames sent concurrently are written whole, one per line, in call order', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const connection = new Connection(streamTransport(input, output), new Dispatcher());
    const big = 'y'.repeat(200_000); // larger than a stream's buffer, so writes really queue
    const methods: string[] = [];
    const reading = (async () => {
      for await (const line of createInterface({ input: output })) methods.push((JSON.parse(line) as { method: string }).method);
    })();
    await Promise.all([connection.notify('a', [big]), connection.notify('b', [big]), connection.notify('c', [big])]);
    output.end();
    await reading;
    assert.deepEqual(methods, ['a', 'b', 'c']);
    connection.close();
  });
});
