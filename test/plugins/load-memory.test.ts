/**
 * What a load leaves in the loading process (issue 21 item 1, docs/benchmarks.md "Memory"): jco's
 * JavaScript is checked on every load, and parsing its 700 KB left ~3 MB of RSS per component in
 * the thread that did it. The check runs in the short-lived toolchain worker instead: measured
 * here as the garbage the loading thread's own heap collects while a cached component is prepared.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { ComponentCache } from '../../main/plugins/component-cache.js';
import { PluginLoadError, ensureExamplesBuilt } from '../../main/plugins/index.js';

const root = mkdtempSync(join(tmpdir(), 'chatty-load-memory-'));
after(() => rmSync(root, { recursive: true, force: true }));

it('checking a cached componentize-js component\'s JavaScript allocates next to nothing on the loading thread', async () => {
  const modules = await ensureExamplesBuilt(undefined, { exclude: ['template', 'text-tools'] });
  const bytes = readFileSync(join(modules, 'json-tools', 'plugin.wasm'));
  const first = new ComponentCache(root);
  const transpiled = await first.prepare(bytes); // transpiles (in the worker) and checks once
  await first.close();

  const cache = new ComponentCache(root); // a new process's cache: the JavaScript is checked again
  try {
    const profiler = new GCProfiler();
    const before = getHeapStatistics().used_heap_size;
    profiler.start();
    const prepared = await cache.prepare(bytes);
    const { statistics } = profiler.stop();
    const collected = statistics.reduce((sum, gc) => sum + Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize), 0);
    const allocated = getHeapStatistics().used_heap_size - before + collected;
    assert.equal(prepared.cached, true);
    assert.deepEqual(prepared.coreInstantiations, transpiled.coreInstantiations);
    assert.ok(prepared.coreInstantiations.length > 0);
    // Parsing the 700 KB text here allocates tens of MB (its syntax tree); the worker's answer a few KB.
    assert.ok(allocated < 8 * 2 ** 20, `the loading thread allocated ${(allocated / 2 ** 20).toFixed(1)} MB`);
  } finally {
    await cache.close();
  }
});

it('the check in the worker refuses tampered cached JavaScript in the same words as before, and the next load is checked again', async () => {
  const modules = await ensureExamplesBuilt(undefined, { exclude: ['template', 'text-tools'] });
  const bytes = readFileSync(join(modules, 'json-tools', 'plugin.wasm'));
  const dir = mkdtempSync(join(root, 'tampered-'));
  const first = new ComponentCache(dir);
  const { dir: entry } = await first.prepare(bytes);
  await first.close();
  appendFileSync(join(entry, 'component.mjs'), '\nprocess.exit(7);\n');
  const cache = new ComponentCache(dir);
  try {
    for (let i = 0; i < 2; i++) {
      await assert.rejects(cache.prepare(bytes), (err: unknown) => {
        assert.ok(err instanceof PluginLoadError, String(err));
        assert.match(err.message, /^the transpiled component's JavaScript is refused: .*process/);
        return true;
      });
    }
  } finally {
    await cache.close();
  }
});
