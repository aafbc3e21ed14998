/**
 * An opaque value nested millions deep (`{"a":{"a":…` in a task's outcome metadata, which the
 * broker scans for duplicate keys but never parses) is refused once it passes MAX_NESTING_DEPTH,
 * so the scan holds at most that many levels. Before 7abf5c5 a 31 MiB line held ~1.5 GB of heap;
 * before the cap, two keys a level (`{"a":0,"b":{…`) still made a key set per level.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { scanJson } from '../../main/fabric/codec/json-scan.js';
import { MAX_NESTING_DEPTH } from '../../main/fabric/wire/sizes.js';

const DEEP_SCAN = fileURLToPath(new URL('./children/deep-scan.ts', import.meta.url));

const OPAQUE = new Set(['conversation']);
const frame = (value: string): string => `{"v":3,"id":1,"result":{"state":"completed","metadata":{"conversation":${value}}}}`;

const scanDeep = (depth: number, unit: string): SpawnSyncReturns<string> =>
  spawnSync(process.execPath, ['--max-old-space-size=300', '--import', 'tsx', DEEP_SCAN, String(depth), unit], { encoding: 'utf8' });

test('a 17 MiB line nesting an opaque value 3 million deep is refused for its depth within a 300 MB heap', { timeout: 180_000 }, () => {
  // Before 7abf5c5, each level held a key set of its own and the process ran out of heap here.
  const out = scanDeep(3_000_000, '{"a":');
  assert.match(out.stdout, /^nesting deeper than 1000 at offset \d+\n$/, `the scan's process ended ${out.status ?? out.signal}: ${out.stderr.slice(-400)}`);
});

test('a 17 MiB line nesting an opaque value with two keys a level (1.6 million deep) is refused for its depth within a 300 MB heap', { timeout: 180_000 }, () => {
  // Before, an object at its second key made a key set, kept per open level: the process ran out
  // of heap (Runtime_MapGrow) here.
  const unit = '{"a":0,"b":';
  const out = scanDeep(Math.floor((17 * 2 ** 20) / (unit.length + 1)), unit);
  assert.match(out.stdout, /^nesting deeper than 1000 at offset \d+\n$/, `the scan's process ended ${out.status ?? out.signal}: ${out.stderr.slice(-400)}`);
});

test('an opaque value may nest to MAX_NESTING_DEPTH counted from the frame, and not one level more', () => {
  // The frame, result and metadata are three levels: the opaque value has the rest.
  const inside = MAX_NESTING_DEPTH - 3;
  assert.deepEqual(scanJson(frame('{"a":0,"b":'.repeat(inside) + '0' + '}'.repeat(inside)), OPAQUE).ok, true);
  assert.deepEqual(scanJson(frame('['.repeat(inside) + '0' + ']'.repeat(inside)), OPAQUE).ok, true);
  const deeper = scanJson(frame('['.repeat(inside + 1) + '0' + ']'.repeat(inside + 1)), OPAQUE);
  assert.match(deeper.ok ? '' : deeper.reason, /^nesting deeper than 1000 at offset \d+$/);
});

test('duplicate keys are still found at every level of a deep nesting, and in objects of several keys', () => {
  const depth = 900;
  const dupDeep = frame('{"a":'.repeat(depth) + '{"x":1,"y":2,"x":3}' + '}'.repeat(depth));
  const scanned = scanJson(dupDeep, OPAQUE);
  assert.equal(scanned.ok, false);
  assert.match(scanned.ok ? '' : scanned.reason, /duplicate key "x"/);
  const second = frame('{"a":{"b":1},"c":{"d":{"e":1,"e":2}},"f":3}');
  assert.match((scanJson(second, OPAQUE) as { reason: string }).reason, /duplicate key "e"/);
  const outer = frame('{"a":{"b":1},"c":2,"a":3}');
  assert.match((scanJson(outer, OPAQUE) as { reason: string }).reason, /duplicate key "a"/);
  const fine = scanJson(frame('{"a":{"a":{"a":1},"b":{"a":2}},"b":[{"a":1},{"a":2}]}'), OPAQUE);
  assert.equal(fine.ok, true);
});
