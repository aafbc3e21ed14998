import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { batchFrame, createChannelPair, frameFromJson, messageFrame, parseFrame, serializeFrame, type TransportFrame } from '../../main/jsonrpc/index.js';

describe('parseFrame', () => {
  test('a valid message is one message frame', () => {
    assert.deepEqual(parseFrame('{"jsonrpc":"2.0","id":1,"method":"ping"}'), messageFrame({ jsonrpc: '2.0', id: 1, method: 'ping' }));
  });

  test('a non-empty array is one batch keeping order, with malformed entries kept as values', () => {
    const frame = parseFrame('[{"jsonrpc":"2.0","method":"n"}, 3, {"jsonrpc":"2.0","id":"r","result":null}]');
    assert.deepEqual(frame, {
      kind: 'batch',
      entries: [
        { kind: 'message', message: { jsonrpc: '2.0', method: 'n' } },
        { kind: 'malformed', value: 3 },
        { kind: 'message', message: { jsonrpc: '2.0', id: 'r', result: null } },
      ],
    });
  });

  test('text that is not JSON is malformed and keeps its exact text', () => {
    assert.deepEqual(parseFrame(' {"jsonrpc": '), { kind: 'malformed', reason: 'parse', text: ' {"jsonrpc": ' });
  });

  test('JSON that is no message, the empty array included, is malformed with its value and exact text', () => {
    assert.deepEqual(parseFrame(' [ ] '), { kind: 'malformed', reason: 'shape', text: ' [ ] ', value: [] });
    const responseShaped = '{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}';
    assert.deepEqual(parseFrame(responseShaped), { kind: 'malformed', reason: 'shape', text: responseShaped, value: JSON.parse(responseShaped) });
  });

  test('returns a frame for any string', () => {
    for (const text of ['', 'null', '"s"', '{}', '[[]]', '\u0000', '{"jsonrpc":"2.0","method":"m","params":1}']) {
      assert.ok(['message', 'batch', 'malformed'].includes(parseFrame(text).kind), text);
    }
  });

  test('frameFromJson decides the same for an already-parsed body', () => {
    assert.deepEqual(frameFromJson([]), { kind: 'malformed', reason: 'shape', text: '[]', value: [] });
    assert.equal(frameFromJson({ jsonrpc: '2.0', method: 'm' }).kind, 'message');
  });

  test('serializeFrame round-trips messages and batches and keeps malformed text exactly', () => {
    for (const text of ['{"jsonrpc":"2.0","id":1,"result":{"a":[1,2]}}', '[{"jsonrpc":"2.0","method":"n"},7]', 'not json at all', '{ "odd" : true }']) {
      assert.equal(serializeFrame(parseFrame(text)), text);
    }
  });
});

describe('in-process channel', () => {
  test('passes frames by reference, in order, without flattening batches', async () => {
    const [left, right] = createChannelPair();
    const received: TransportFrame[] = [];
    const ended = right.start((frame) => received.push(frame));
    const frames: TransportFrame[] = [
      batchFrame([
        { jsonrpc: '2.0', method: 'a' },
        { jsonrpc: '2.0', id: 1, method: 'b' },
      ]),
      parseFrame('{ not json'),
      messageFrame({ jsonrpc: '2.0', method: 'c' }),
    ];
    for (const frame of frames) await left.send(frame);
    await left.end();
    await ended;
    assert.equal(received.length, 3);
    received.forEach((frame, i) => assert.equal(frame, frames[i]));
    await assert.rejects(left.send(frames[2]!));
  });

  test('frames sent before the receiver starts are kept for it', async () => {
    const [left, right] = createChannelPair();
    await left.send(messageFrame({ jsonrpc: '2.0', method: 'early' }));
    await left.end();
    const received: TransportFrame[] = [];
    await right.start((frame) => received.push(frame));
    assert.equal(received.length, 1);
  });

  test('closing one end ends the other and fails its sends', async () => {
    const [left, right] = createChannelPair();
    const rightEnded = right.start(() => {});
    const leftEnded = left.start(() => {});
    left.close();
    await Promise.all([leftEnded, rightEnded]);
    await assert.rejects(right.send(messageFrame({ jsonrpc: '2.0', method: 'late' })));
  });
});
