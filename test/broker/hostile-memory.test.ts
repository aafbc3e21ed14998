/**
 * What a hostile worker costs the gateway's memory: what its calls leave once they have ended, and
 * what a task's kept text costs while it runs. Real workers (children/hostile-roster.ts,
 * children/hostile-chunks.ts, children/agent.ts) on real socketpairs; the heap measured after a
 * full garbage collection.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { test } from 'node:test';
import { LocalRunner } from '../../main/broker/runners/index.js';
import { plan, startBroker } from './helpers.js';

const HOSTILE = fileURLToPath(new URL('./children/hostile-roster.ts', import.meta.url));
const CHUNKS = fileURLToPath(new URL('./children/hostile-chunks.ts', import.meta.url));

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

test("an ended callee's spawn context is not kept: a roster that repeats one name a million times, ten times over, leaves the heap as it was", async () => {
  const t = startBroker(['echo']);
  t.broker.addVirtualAgent('hostile', new LocalRunner({ command: process.execPath, args: ['--import', 'tsx', HOSTILE], reapGraceMs: 1_000 }), { description: 'hostile' });
  try {
    // A first call warms everything up (modules, codecs, the caches a first call fills).
    const warm = await t.root.invoke('hostile', JSON.stringify({ to: 'echo', prompt: plan({ echo: 'hi' }), count: 1, rosterSize: 1 }));
    assert.equal(warm.response, '1', warm.error);
    const before = heapAfterGc();
    const result = await t.root.invoke('hostile', JSON.stringify({ to: 'echo', prompt: plan({ echo: 'hi' }), count: 10, rosterSize: 1_000_000 }));
    assert.equal(result.response, '10', result.error);
    const grown = heapAfterGc() - before;
    // Each roster is 8 MB as an array (and more as the strings a parse makes): ten of them kept are 80 MB and more.
    assert.ok(grown < 24 * 1024 * 1024, `the heap grew by ${(grown / 1024 / 1024).toFixed(1)} MiB and stayed so after the calls ended`);
  } finally {
    await t.close();
  }
});

test("a task's kept text costs about its cap, even sent one character per chunk", async () => {
  const cap = 256 * 1024; // 4 MiB by default: a smaller cap keeps the test short, the cost per piece is the same
  const t = startBroker([], { maxTaskTextBytes: cap });
  t.broker.addVirtualAgent('chunks', new LocalRunner({ command: process.execPath, args: ['--import', 'tsx', CHUNKS], reapGraceMs: 1_000 }), { description: 'chunks' });
  /** Runs the worker for `count` one-character chunks and returns the heap once it has sent them all (its task still running). */
  const heapWhileKept = async (count: number): Promise<number> => {
    const abort = new AbortController();
    let texts = 0;
    let during = 0;
    const result = await t.root.invoke('chunks', String(count), {
      signal: abort.signal,
      onProgress: (event) => {
        if (!('Text' in event) || ++texts < count) return;
        during = heapAfterGc(); // every chunk is in the broker's TaskText now
        abort.abort();
      },
    });
    assert.equal(result.cancelled_by_user, true);
    return during;
  };
  try {
    await heapWhileKept(1_000); // warms everything up (modules, codecs, the caches a first call fills)
    const before = heapAfterGc();
    const grown = (await heapWhileKept(400_000)) - before; // past the 128 KiB head, a full tail of 128 Ki one-byte pieces
    assert.ok(grown < 4 * cap + 4 * 1024 * 1024, `the heap grew by ${(grown / 1024 / 1024).toFixed(1)} MiB to keep ${cap / 1024} KiB of a task's text`);
  } finally {
    await t.close();
  }
});
