/**
 * A batch is decoded at a bounded cost: over MAX_BATCH_ENTRIES entries (every entry counts, valid
 * or not) it is not looked into at all and is answered one Invalid Request under id null; its
 * length is told from its text before JSON.parse builds it (10 MiB of `[{},[],…]`: ~2 s of
 * JSON.parse before); entries that cannot be a message never reach the zod union's costly failure path.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Dispatcher, MAX_BATCH_ENTRIES, arrayLongerThan, dispatchOnce, parseFrame } from '../../main/jsonrpc/index.js';
import { cpuDuringSync } from '../helpers/cpu-meter.js';

const invalid = (n: number, entry: string): string => `[${Array(n).fill(entry).join(',')}]`;
const REFUSAL = { kind: 'message', message: { jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: a batch of more than ${MAX_BATCH_ENTRIES} entries` } } };

/** Seeded arrays of `lowest`..`highest` entries whose values hide commas and brackets in strings and nested values. */
function arrays(seed: number, count: number, lowest: number, highest: number): string[] {
  let state = seed;
  const random = (): number => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const ws = (): string => pick(['', '', ' ', '\n', '\t', '\r', ' \n\t ']);
  const pieces = [',', ',,', '[', '{', ']', '}', '\\"', '\\\\', '\\u0022', '\\u002c', '\ud83d\ude00', ':', 'a'];
  const string = (): string => `"${Array.from({ length: Math.floor(random() * 5) }, () => pick(pieces)).join('')}"`;
  const value = (levels: number): string => {
    const r = random();
    if (levels === 0 || r < 0.4) return pick([string(), '1', '-0', '1e999', 'true', 'null', '[]', '{}', `[${ws()}]`]);
    const kids = Array.from({ length: Math.floor(random() * 4) }, () => value(levels - 1));
    const sep = `${ws()},${ws()}`;
    if (r < 0.7) return `[${ws()}${kids.join(sep)}${ws()}]`;
    return `{${ws()}${kids.map((kid, at) => `"k${at}${string().slice(1)}${ws()}:${ws()}${kid}`).join(sep)}${ws()}}`;
  };
  return Array.from({ length: count }, () => {
    const entries = lowest + Math.floor(random() * (highest - lowest + 1));
    return `${ws()}[${ws()}${Array.from({ length: entries }, () => value(3)).join(`${ws()},${ws()}`)}${ws()}]${ws()}`;
  });
}

describe('batch cap', () => {
  test('a batch of more than MAX_BATCH_ENTRIES entries, valid or not, is one malformed frame, its entries never decoded', () => {
    assert.equal(MAX_BATCH_ENTRIES, 100);
    const text = invalid(MAX_BATCH_ENTRIES + 1, '1');
    const frame = parseFrame(text);
    assert.deepEqual(frame, { kind: 'malformed', reason: 'batch-too-long', text, entries: MAX_BATCH_ENTRIES + 1 });
    assert.equal(parseFrame(invalid(MAX_BATCH_ENTRIES, '{"jsonrpc":"2.0","method":"n"}')).kind, 'batch');
  });

  test('its length is told from its text before JSON.parse: what follows the entry past the cap is never read', async () => {
    // JSON.parse would fail at the end; the count stops at the comma that makes the 101st entry.
    const text = `[${'{},'.repeat(MAX_BATCH_ENTRIES)}{}, and then no JSON at all`;
    assert.throws(() => JSON.parse(text), SyntaxError);
    const frame = parseFrame(text);
    assert.deepEqual(frame, { kind: 'malformed', reason: 'batch-too-long', text, entries: MAX_BATCH_ENTRIES + 1 });
    assert.deepEqual(await dispatchOnce(new Dispatcher(), frame), REFUSAL);
    // At the cap the text is parsed as before: the same text with one entry fewer is a parse error.
    const atCap = `[${'{},'.repeat(MAX_BATCH_ENTRIES - 1)}{} and then no JSON at all`;
    assert.deepEqual(parseFrame(atCap), { kind: 'malformed', reason: 'parse', text: atCap });
  });

  test('the count agrees with JSON.parse: commas and brackets in strings and nested values are no entries', () => {
    let refused = 0;
    for (const text of arrays(20261204, 400, MAX_BATCH_ENTRIES - 3, MAX_BATCH_ENTRIES + 3)) {
      const length = (JSON.parse(text) as unknown[]).length;
      assert.equal(arrayLongerThan(text, MAX_BATCH_ENTRIES), length > MAX_BATCH_ENTRIES, `${length} entries: ${text.slice(0, 160)}`);
      const frame = parseFrame(text);
      assert.equal(frame.kind === 'malformed' && frame.reason === 'batch-too-long', length > MAX_BATCH_ENTRIES);
      if (length > MAX_BATCH_ENTRIES) refused++;
    }
    assert.ok(refused > 100 && refused < 300, `${refused} of 400 refused`);
    // An object (a message) with any number of commas is never a long batch.
    const wide = `{"jsonrpc":"2.0","method":"n","params":[${'1,'.repeat(500)}1]}`;
    assert.equal(arrayLongerThan(wide, MAX_BATCH_ENTRIES), false);
    assert.equal(parseFrame(wide).kind, 'message');
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
