/**
 * A batch is decoded at a bounded cost: over MAX_BATCH_ENTRIES entries (every entry counts, valid
 * or not) it is not looked into at all and is answered one Invalid Request under id null; entries
 * that cannot be a message never reach the zod union's costly failure path.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Dispatcher, MAX_BATCH_ENTRIES, dispatchOnce, parseFrame } from '../../main/jsonrpc/index.js';
import { cpuDuringSync } from '../helpers/cpu-meter.js';

const invalid = (n: number, entry: string): string => `[${Array(n).fill(entry).join(',')}]`;

describe('batch cap', () => {
  test('a batch of more than MAX_BATCH_ENTRIES entries, valid or not, is one malformed frame, its entries never decoded', () => {
    assert.equal(MAX_BATCH_ENTRIES, 100);
    const text = invalid(MAX_BATCH_ENTRIES + 1, '1');
    const frame = parseFrame(text);
    assert.deepEqual(frame, { kind: 'malformed', reason: 'batch-too-long', text, entries: MAX_BATCH_ENTRIES + 1 });
    assert.equal(parseFrame(invalid(MAX_BATCH_ENTRIES, '{"jsonrpc":"2.0","method":"n"}')).kind, 'batch');
  });

  test('the dispatcher answers it with the single -32600 under id null, running nothing', async () => {
    let ran = 0;
    const dispatcher = new Dispatcher().onRequest('ping', () => {
      ran++;
      return {};
    });
    const answer = await dispatchOnce(dispatcher, parseFrame(invalid(MAX_BATCH_ENTRIES + 1, '{"jsonrpc":"2.0","id":1,"method":"ping"}')));
    assert.deepEqual(answer, {
      kind: 'message',
      message: { jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: a batch of more than ${MAX_BATCH_ENTRIES} entries` } },
    });
    assert.equal(ran, 0);
  });

  test('values that cannot be a message are decided without the zod union (a full batch of them in well under a millisecond each)', () => {
    // Before: ~28 µs for `1`, ~57 µs for `{}` each; after: the quick checks only.
    const text = invalid(MAX_BATCH_ENTRIES, '{}');
    const rounds = 200;
    // CPU time, not wall-clock (which a loaded machine stretches): 10 µs stays under the 28-57 µs it guards.
    const { cpuMs } = cpuDuringSync(() => {
      for (let i = 0; i < rounds; i++) parseFrame(text);
    });
    const perEntryUs = (cpuMs * 1000) / (rounds * MAX_BATCH_ENTRIES);
    assert.ok(perEntryUs < 10, `${perEntryUs.toFixed(1)} µs of CPU per entry`);
  });
});
