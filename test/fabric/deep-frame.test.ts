/**
 * A worker's frame that nests millions of arrays deep where no opaque value travels (no `metadata`
 * key, so `JSON.parse` reads it, not the capped scan). Before, JSON.parse built every level: one
 * 32 MiB line held ~0.9 GB of heap and 11.8 s of the broker's main thread, then the key count
 * overflowed the stack ('undecodable line (Maximum call stack size exceeded)').
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openConnection } from '../../main/fabric/index.js';
import { cpuDuring } from '../helpers/cpu-meter.js';
import { childArgs, newFabric } from './helpers.js';

test('a call nesting 16 million arrays deep is refused for its depth before it is parsed, at little CPU', { timeout: 180_000 }, async () => {
  const opened = await openConnection('deep', process.execPath, childArgs('deep-frame.ts', String(16_000_000)), { ...newFabric(), log: () => {} });
  try {
    const { result: reason, cpuMs } = await cpuDuring(() => opened.connection.closed);
    assert.match(reason, /^decode error: not a JSON frame: nesting deeper than 1000 at offset \d+$/);
    // Reading the 32 MiB line and refusing it took ~175 ms here; parsing it first took 11,800.
    assert.ok(cpuMs < 2_000, `refusing the line took ${cpuMs} ms of the main thread`);
  } finally {
    opened.child.kill('SIGKILL');
  }
});
