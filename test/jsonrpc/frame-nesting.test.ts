/**
 * parseFrame refuses text nesting more than MAX_NESTING_DEPTH levels before JSON.parse, which
 * builds every level (10 MiB of `[`: ~5.5 s of the caller's thread before). The count is the
 * worker wire's own; the refusal is answered -32600 under the id its top-level members hold.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_NESTING_DEPTH } from '../../main/fabric/wire/sizes.js';
import { Dispatcher, TOO_DEEP_MESSAGE, dispatchOnce, parseFrame, type TransportFrame } from '../../main/jsonrpc/index.js';
import { topLevelMembers } from '../../main/jsonrpc/top-members.js';
import { cpuDuringSync } from '../helpers/cpu-meter.js';

/** A request whose params nest `levels` levels below the message object itself (the message: one more). */
const call = (levels: number, head = '"jsonrpc":"2.0","id":1,"method":"m",'): string =>
  `{${head}"params":${'['.repeat(levels)}1${']'.repeat(levels)}}`;

const answerTo = (frame: TransportFrame): Promise<TransportFrame | undefined> => dispatchOnce(new Dispatcher().onRequest('m', () => 'ran'), frame);
const refusal = (id: string | number | null): TransportFrame => ({ kind: 'message', message: { jsonrpc: '2.0', id, error: { code: -32600, message: TOO_DEEP_MESSAGE } } });

describe('nesting cap', () => {
  test('exactly MAX_NESTING_DEPTH levels is a message; one more is refused before any parse', async () => {
    assert.equal(MAX_NESTING_DEPTH, 1000);
    assert.match(TOO_DEEP_MESSAGE, /nested too deeply/);
    const at = parseFrame(call(MAX_NESTING_DEPTH - 1));
    assert.equal(at.kind, 'message');
    assert.deepEqual(await answerTo(at), { kind: 'message', message: { jsonrpc: '2.0', id: 1, result: 'ran' } });
    const text = call(MAX_NESTING_DEPTH);
    const past = parseFrame(text);
    assert.deepEqual({ ...past }, { kind: 'malformed', reason: 'too-deep', text, top: Object.assign(Object.create(null), { jsonrpc: '2.0', id: 1, method: 'm' }) });
    assert.deepEqual(await answerTo(past), refusal(1));
  });

  test('empty [] and {} open no level, and brackets inside strings are not levels', () => {
    const empties = `{"jsonrpc":"2.0","id":1,"method":"m","params":${'['.repeat(MAX_NESTING_DEPTH)}${']'.repeat(MAX_NESTING_DEPTH)}}`;
    assert.equal(parseFrame(empties).kind, 'message');
    const inString = `{"jsonrpc":"2.0","id":1,"method":"m","params":["${'[{'.repeat(5_000)}\\"${'['.repeat(2_000)}"]}`;
    assert.equal(parseFrame(inString).kind, 'message');
  });

  test('a metadata key or an escaped key before the deep part does not stop the count (the codec stops there, jsonrpc does not)', async () => {
    for (const head of ['"metadata":1,', '"\\u0061":1,', '"jsonrpc":"2.0","id":"x","method":"m","metadata":{},']) {
      const frame = parseFrame(call(MAX_NESTING_DEPTH * 3, head));
      assert.equal(frame.kind === 'malformed' && frame.reason, 'too-deep', head);
    }
  });

  test('the refusal is under the top-level id wherever it is, never one nested, and null when none can be read', async () => {
    const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
    // As the TypeScript SDK writes a request: method and params first, then jsonrpc and id.
    assert.deepEqual(await answerTo(parseFrame(`{"method":"m","params":{"a":${deep}},"jsonrpc":"2.0","id":"sdk"}`)), refusal('sdk'));
    assert.deepEqual(await answerTo(parseFrame(`{ "jsonrpc" : "2.0" , "id" : -7.5e1 , "method":"m","params":${deep}}`)), refusal(-75));
    assert.deepEqual(await answerTo(parseFrame(`{"jsonrpc":"2.0","method":"m","params":{"id":"inner","x":${deep}}}`)), refusal(null));
    assert.deepEqual(await answerTo(parseFrame(`{"jsonrpc":"2.0","id":{"a":1},"method":"m","params":${deep}}`)), refusal(null));
    assert.deepEqual(await answerTo(parseFrame(`[{"jsonrpc":"2.0","id":1,"method":"m","params":${deep}}]`)), refusal(null), 'a batch is refused whole');
    assert.deepEqual(await answerTo(parseFrame(`{"jsonrpc":"2.0","id":"a\\"]}[","method":"m","params":${deep}}`)), refusal('a"]}['));
    assert.deepEqual(await answerTo(parseFrame(deep)), refusal(null));
    assert.deepEqual(await answerTo(parseFrame(`{"jsonrpc":"2.0","id":3,"method":"m","params":${'['.repeat(5_000)}`)), refusal(3), 'cut short');
    assert.deepEqual(await answerTo(parseFrame(`{"jsonrpc":"2.0","id":tru,"method":"m","params":${deep}}`)), refusal(null), 'not JSON at the top');
    // A response is never answered, however deep.
    assert.equal(await answerTo(parseFrame(`{"jsonrpc":"2.0","id":4,"result":${deep}}`)), undefined);
  });

  test('only the envelope members are kept (an escaped key decoded); a __proto__ member sets or pollutes no prototype', async () => {
    const top = topLevelMembers(`{"__proto__":{"polluted":1},"\\u0069d":"p","params":{"id":1},"x":"y","method":"m","result":[1]}`);
    assert.ok(top);
    assert.equal(Object.getPrototypeOf(top), null);
    assert.deepEqual({ ...top }, { id: 'p', method: 'm', result: null });
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    assert.deepEqual(await answerTo(parseFrame(`{"__proto__":{"polluted":1},"jsonrpc":"2.0","id":"p","method":"m","params":${'['.repeat(2_000)}}`)), refusal('p'));
  });

  test('10 MiB of [ is refused for a few tens of milliseconds of CPU, not seconds', () => {
    // Before: JSON.parse built 10 million levels, then failed (~5.5 s through the gateway).
    const text = '['.repeat(10 * 1024 * 1024);
    const { result, cpuMs } = cpuDuringSync(() => parseFrame(text));
    assert.equal(result.kind === 'malformed' && result.reason, 'too-deep');
    // CPU time, not wall-clock: 500 ms is far under the seconds it guards, far over the refusal's cost.
    assert.ok(cpuMs < 500, `${cpuMs.toFixed(0)} ms of CPU`);
  });

  test('800,000 top-level members before a deep tail: the refusal builds none of them (far less than their JSON.parse)', async () => {
    const members = Array.from({ length: 800_000 }, (_, i) => `"k${i}":1`).join(',');
    const text = `{"jsonrpc":"2.0",${members},"id":"w","method":"m","params":${'['.repeat(2_000)}}`;
    const { result, cpuMs } = cpuDuringSync(() => parseFrame(text));
    assert.deepEqual(await answerTo(result), refusal('w'));
    // Before (every member kept in a null-prototype object): ~1.3 s; now ~0.1 s; JSON.parse of the members alone ~1.4 s.
    assert.ok(cpuMs < 600, `${cpuMs.toFixed(0)} ms of CPU`);
  });

  test('a text that is not JSON but nests past the cap before its first error is refused as too deep', () => {
    const frame = parseFrame(`x${'['.repeat(2_000)}`);
    assert.equal(frame.kind === 'malformed' && frame.reason, 'too-deep');
    const short = parseFrame(`x${'['.repeat(500)}`);
    assert.equal(short.kind === 'malformed' && short.reason, 'parse', 'a shorter one is not counted: Parse error as ever');
  });
});
