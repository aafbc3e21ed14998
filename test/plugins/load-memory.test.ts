/**
 * What a load leaves in the loading process (issue 21 item 1, docs/benchmarks.md "Memory"): jco's
 * JavaScript is checked on every load, and parsing its 700 KB left ~3 MB of RSS per component in
 * the thread that did it. The check runs in the short-lived toolchain worker instead: measured
 * here as the garbage the loading thread's own heap collects while a cached component is prepared.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, it } from 'node:test';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { ComponentCache } from '../../main/plugins/component-cache.js';
import { rewriteCachedFile } from './cache-entry-edit.js';
import { PluginLoadError, ensureExamplesBuilt } from '../../main/plugins/index.js';

const run = promisify(execFile);
const root = mkdtempSync(join(tmpdir(), 'chatty-load-memory-'));
after(() => rmSync(root, { recursive: true, force: true }));

it('checking a cached componentize-js component\'s JavaScript allocates next to nothing on the loading thread', async () => {
  const modules = await ensureExamplesBuilt(undefined, { exclude: ['template', 'text-tools'], cacheDir: join(root, 'examples-cache') });
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
  const modules = await ensureExamplesBuilt(undefined, { exclude: ['template', 'text-tools'], cacheDir: join(root, 'examples-cache') });
  const bytes = readFileSync(join(modules, 'json-tools', 'plugin.wasm'));
  const dir = mkdtempSync(join(root, 'tampered-'));
  const first = new ComponentCache(dir);
  const { dir: entry } = await first.prepare(bytes);
  await first.close();
  // Its meta.json made to match (else the hash check refuses it first): the JavaScript check must still.
  rewriteCachedFile(entry, 'component.mjs', `${readFileSync(join(entry, 'component.mjs'), 'utf8')}\nprocess.exit(7);\n`);
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

/**
 * A child process that reads ten distinct 12 MB components one after another (each load then
 * refused: the bytes are not a component) and prints how much the main thread's C heap (brk, the
 * `[heap]` mapping) grew. glibc raises its mmap threshold to a big block's size once one is freed,
 * so from the second component on, a plain `Uint8Array` of its bytes came from that heap, which
 * kept 12–24 MB of them resident after they were freed (docs/benchmarks.md "Memory").
 */
const HEAP_GROWTH_CHILD = `
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
const [root, registryUrl] = process.argv.slice(-2);
const { ModuleRegistry } = await import(registryUrl);
const heapKb = () => {
  const smaps = readFileSync('/proc/self/smaps', 'utf8');
  const at = smaps.indexOf('[heap]');
  return at < 0 ? 0 : Number(/Rss:\\s+(\\d+) kB/.exec(smaps.slice(at))[1]);
};
const dirs = Array.from({ length: 10 }, (_, i) => join(root, 'm' + i));
const registry = new ModuleRegistry({ cacheDir: join(root, 'cache'), logger: { log() {} } });
globalThis.gc();
const before = heapKb();
for (const dir of dirs) {
  const report = await registry.scanDirectory(dir);
  // Read whole, then refused by the first check of its bytes.
  if (!/cannot read the component: not a WebAssembly binary/.test(report.failed[0]?.reason)) throw new Error('unexpected: ' + JSON.stringify(report));
  globalThis.gc();
  await new Promise((resolve) => setTimeout(resolve, 20));
}
await registry.close();
globalThis.gc();
process.stdout.write(JSON.stringify({ grewMb: (heapKb() - before) / 1024 }));
`;

it('reading ten 12 MB components leaves the main thread\'s C heap where it was (their bytes are on pages of their own)', async () => {
  const dir = mkdtempSync(join(root, 'heap-growth-'));
  for (let i = 0; i < 10; i++) {
    // Distinct bytes of one size, as copies of one plugin: the size glibc's threshold was raised to.
    mkdirSync(join(dir, `m${i}`, 'p'), { recursive: true });
    writeFileSync(join(dir, `m${i}`, 'p', 'module.toml'), '[module]\nname = "p"\nversion = "1.0.0"\nwasm = "plugin.wasm"\n');
    writeFileSync(join(dir, `m${i}`, 'p', 'plugin.wasm'), Buffer.alloc(12_000_000, i + 1));
  }
  const script = join(dir, 'child.mjs');
  writeFileSync(script, HEAP_GROWTH_CHILD);
  const registryUrl = new URL('../../main/plugins/index.ts', import.meta.url).href;
  const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', script, dir, registryUrl]);
  const { grewMb } = JSON.parse(stdout) as { grewMb: number };
  // Before: +10.8 MB, the step 4 of 13 idle gateways of 10 plugins paid (a freed component kept).
  assert.ok(grewMb < 4, `the [heap] mapping grew by ${grewMb.toFixed(1)} MB`);
});
