/**
 * `IdTable` (what a connection has in flight, by id) answers as a `Map` would, for any sequence of
 * adds and removes: ids counted up, ids a peer chose to collide (all equal modulo the table's
 * size), and the table growing while full of collisions.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { IdTable } from '../../main/fabric/codec/id-table.js';

/** A small deterministic generator (mulberry32), so a failure names its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Runs `steps` random operations on an IdTable and a Map side by side, comparing every answer. */
function agreeWithMap(seed: number, steps: number, pickId: (next: () => number) => number): void {
  const next = random(seed);
  const table = new IdTable<string>();
  const map = new Map<number, string>();
  for (let step = 0; step < steps; step++) {
    const op = next();
    // Often an id already in (to get, replace or remove it), else a fresh one.
    const known = [...map.keys()];
    const id = known.length > 0 && next() < 0.5 ? known[Math.floor(next() * known.length)]! : pickId(next);
    const where = `seed ${seed}, step ${step}, id ${id}`;
    if (op < 0.45) {
      table.set(id, `v${step}`);
      map.set(id, `v${step}`);
    } else if (op < 0.85) {
      assert.equal(table.delete(id), map.delete(id), `delete: ${where}`);
    } else {
      assert.equal(table.get(id), map.get(id), `get: ${where}`);
    }
    assert.equal(table.size, map.size, `size: ${where}`);
    for (const [key, value] of map) {
      assert.equal(table.has(key), true, `has ${key}: ${where}`);
      assert.equal(table.get(key), value, `get ${key}: ${where}`);
    }
    assert.equal(table.has(id), map.has(id), `has: ${where}`);
  }
  assert.deepEqual(table.sortedValues(), [...map].sort(([a], [b]) => a - b).map(([, value]) => value));
}

it('agrees with a Map for ids counted up, as a connection\'s own requests are', () => {
  for (let seed = 1; seed <= 20; seed++) {
    let counter = 0;
    agreeWithMap(seed, 400, () => ++counter);
  }
});

it('agrees with a Map for ids a peer chose to collide (one residue modulo 16, 64 and 1024)', () => {
  for (let seed = 21; seed <= 40; seed++) agreeWithMap(seed, 400, (next) => 7 + 1024 * Math.floor(next() * 64));
});

it('agrees with a Map for any safe integer id, past 2^32 included', () => {
  for (let seed = 41; seed <= 60; seed++) agreeWithMap(seed, 300, (next) => Math.floor(next() * Number.MAX_SAFE_INTEGER));
});

it('keeps every entry through growth, and removing all of them leaves it empty', () => {
  const table = new IdTable<number>();
  for (let id = 0; id < 1000; id++) table.set(id * 16, id); // all in one home slot of the first table
  assert.equal(table.size, 1000);
  for (let id = 0; id < 1000; id++) assert.equal(table.get(id * 16), id);
  for (let id = 999; id >= 0; id -= 2) assert.equal(table.delete(id * 16), true);
  for (let id = 0; id < 1000; id++) assert.equal(table.has(id * 16), id % 2 === 0);
  for (let id = 0; id < 1000; id += 2) table.delete(id * 16);
  assert.equal(table.size, 0);
  assert.deepEqual(table.sortedValues(), []);
  table.set(5, 5);
  table.clear();
  assert.equal(table.has(5), false);
  assert.equal(table.size, 0);
});
