/**
 * An opaque value nested millions deep (`{"a":{"a":…` in a task's outcome metadata, which the
 * broker scans for duplicate keys but never parses) costs the broker's scan a byte or so a level,
 * not a key set per level. Before, a 31 MiB line held ~1.5 GB of heap and took ~7 s of the main
 * thread's CPU.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { scanJson } from '../../main/fabric/codec/json-scan.js';

const DEEP_SCAN = fileURLToPath(new URL('./children/deep-scan.ts', import.meta.url));

const OPAQUE = new Set(['conversation']);
const frame = (value: string): string => `{"v":3,"id":1,"result":{"state":"completed","metadata":{"conversation":${value}}}}`;

test('a 17 MiB line nesting an opaque value 3 million deep is scanned within a 300 MB heap', { timeout: 180_000 }, () => {
  // Before, each level held a key set of its own: about 1.5 GB of heap for a 31 MiB line, and the
  // process ran out of heap here.
  const out = spawnSync(process.execPath, ['--max-old-space-size=300', '--import', 'tsx', DEEP_SCAN, '3000000'], { encoding: 'utf8' });
  assert.equal(out.stdout, 'ok\n', `the scan's process ended ${out.status ?? out.signal}: ${out.stderr.slice(-400)}`);
});

test('duplicate keys are still found at every level of a deep nesting, and in objects of several keys', () => {
  const depth = 10_000;
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
