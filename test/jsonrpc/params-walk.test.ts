/**
 * The envelope check walked every key of `params`: a value with the envelope that the quick check
 * leaves to zod (an extra key, an id zod refuses) reached `MessageSchema`, whose `z.record`
 * walked and copied params in each branch of the union, ~3–5× JSON.parse: a 9.4 MiB batch of 100
 * pings with one extra key each stalled every client 2–4 s. Now `ParamsSchema` checks "object or
 * array" without looking inside; the values accepted, and what they decode to, are the old
 * schema's (proved here against it).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { z } from 'zod';
import { MessageSchema, ParamsSchema, parseFrame } from '../../main/jsonrpc/index.js';
import { cpuDuringSync } from '../helpers/cpu-meter.js';

/** The schema as it was: by name (a record) or by position (an array), walked. */
const WalkedParams = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]);

test('a message whose params are an object is decoded without listing its keys', () => {
  let listed = 0;
  const params = new Proxy(Object.assign(Object.create(null) as Record<string, unknown>, { name: 'echo' }), {
    ownKeys: (target) => {
      listed++;
      return Reflect.ownKeys(target);
    },
  });
  // An extra key: the quick check leaves it to zod, which refuses it (strict objects) …
  assert.equal(MessageSchema.safeParse({ jsonrpc: '2.0', id: 1, method: 'm', params, extra: 1 }).success, false);
  // … and one zod accepts: params without a prototype are left to zod by the quick check.
  assert.equal(MessageSchema.safeParse({ jsonrpc: '2.0', id: 1, method: 'm', params }).success, true);
  assert.equal(listed, 0, `params' keys were listed ${listed} times`);
});

test('ParamsSchema accepts what the walked schema accepts, with the same value', () => {
  const KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'a', 'b'];
  const entry = fc.tuple(fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 4 })), fc.jsonValue({ maxDepth: 2 }));
  // As a body's text parses: a `__proto__` key is an own key.
  const objectText = fc.array(entry, { maxLength: 5 }).map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`);
  const value = fc.oneof(fc.jsonValue({ maxDepth: 2 }), objectText.map((text) => JSON.parse(text) as unknown));
  fc.assert(
    fc.property(value, (input) => {
      const walked = WalkedParams.safeParse(input);
      const now = ParamsSchema.safeParse(input);
      assert.equal(now.success, walked.success, JSON.stringify(input));
      if (walked.success && now.success) {
        assert.deepStrictEqual(now.data, walked.data);
        assert.equal(JSON.stringify(now.data), JSON.stringify(walked.data));
      }
    }),
    { numRuns: 3000 },
  );
});

test('a body of messages with wide params left to zod decodes in about the time JSON.parse takes', () => {
  const keys = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
  const text = JSON.stringify(Array.from({ length: 20 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping', params: keys, x: 1 })));
  // The least CPU time of 5 runs: CPU, not wall-clock, so a loaded machine's waits for a core
  // are not counted as either decode's own.
  const best = (run: () => void): number => {
    let min = Infinity;
    for (let i = 0; i < 5; i++) min = Math.min(min, cpuDuringSync(run).cpuMs);
    return min;
  };
  const parse = best(() => JSON.parse(text));
  const frame = best(() => parseFrame(text));
  // Generous: the walk made it ~3–5× JSON.parse; now it is JSON.parse plus 20 envelope checks.
  assert.ok(frame < 2 * parse + 5, `parseFrame ${frame.toFixed(1)} ms, JSON.parse ${parse.toFixed(1)} ms`);
});
