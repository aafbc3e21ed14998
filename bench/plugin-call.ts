/**
 * bench/plugin-call: what a plugin call costs.
 *
 *   node --import tsx bench/plugin-call.ts [--calls-only]
 *
 * Calls the same `echo` tool three ways (a plain JS function, the guest called directly on this
 * thread, and the worker-thread round trip through `ModuleHandle.invokeTool`, one at a time and
 * 32 in flight) and prints median and p99 per call, CPU per call (the process: both threads) and
 * the ratios; then times loading 1 and 20 modules cold (empty transpile cache) and cached. The guest is the hand-written WAT echo fixture, so the numbers are the
 * runtime's overhead, not a JS engine's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ComponentCache } from '../main/plugins/component-cache.js';
import { ModuleRegistry, type ToolOutcome } from '../main/plugins/index.js';
import { CoreInstances } from '../main/plugins/worker/core-instances.js';
import { LiftMeter } from '../main/plugins/worker/lift-meter.js';
import { chattyImports } from '../main/plugins/worker/host-imports.js';
import type { GuestWorkerData, ToolCallRequest } from '../main/plugins/worker/protocol.js';
import { buildFixture, fixtureManifest, writeModuleDir } from '../test/helpers/wasm-fixtures.js';

const REQUEST: ToolCallRequest = { name: 'echo', argumentsJson: '{"text":"hello, plugin"}', callId: 'bench' };
const quiet = { log(): void {} };

interface Stats {
  median: number;
  p99: number;
  /** Process CPU time (every thread: this one and the module's worker) per call, µs. */
  cpu: number;
}

function stats(samplesUs: number[], cpu: number): Stats {
  const sorted = [...samplesUs].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { median: at(0.5), p99: at(0.99), cpu };
}

/**
 * Per-call microseconds, timed in batches so the timer's own cost stays out of cheap calls; with
 * `inFlight` > 1 a batch is that many calls started together, and a sample is the batch's time
 * over its calls (throughput, not latency).
 */
async function measure(call: () => unknown, batches: number, perBatch: number, inFlight = 1): Promise<Stats> {
  const batch = async (): Promise<void> => {
    if (inFlight === 1) for (let i = 0; i < perBatch; i++) await call();
    else await Promise.all(Array.from({ length: perBatch }, () => call()));
  };
  for (let i = 0; i < 5; i++) await batch();
  const samples: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let b = 0; b < batches; b++) {
    const t0 = performance.now();
    await batch();
    samples.push(((performance.now() - t0) * 1000) / perBatch);
  }
  const cpu = process.cpuUsage(cpu0);
  return stats(samples, (cpu.user + cpu.system) / (batches * perBatch));
}

/** A distinct component per module: the fixture plus a custom section naming it. */
function distinct(component: Uint8Array, tag: string): Uint8Array {
  const name = new TextEncoder().encode(`bench-${tag}`);
  const payload = [name.length, ...name];
  return Uint8Array.from([...component, 0x00, payload.length, ...payload]);
}

async function loadTimes(count: number, component: Uint8Array): Promise<{ cold: number; cached: number }> {
  const root = mkdtempSync(join(tmpdir(), 'chatty-bench-'));
  try {
    for (let i = 0; i < count; i++) {
      writeModuleDir(join(root, 'modules'), `m${i}`, { component: distinct(component, `${count}-${i}`), manifest: fixtureManifest(`m${i}`) });
    }
    const time = async (): Promise<number> => {
      const registry = new ModuleRegistry({ cacheDir: join(root, 'cache'), logger: quiet });
      const t0 = performance.now();
      const report = await registry.scanDirectory(join(root, 'modules'));
      const ms = performance.now() - t0;
      if (report.loaded.length !== count) throw new Error(`loaded ${report.loaded.length} of ${count}: ${JSON.stringify(report.failed)}`);
      await registry.close();
      return ms;
    };
    const cold = await time();
    const cached = await time();
    return { cold, cached };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const component = await buildFixture('echo');
  const root = mkdtempSync(join(tmpdir(), 'chatty-bench-'));
  try {
    // 1. A plain JS function doing what the guest does.
    const plain = (req: ToolCallRequest): ToolOutcome => ({ ok: true, value: { content: req.argumentsJson } });
    const plainStats = await measure(() => plain(REQUEST), 200, 1000);

    // 2. The same guest, transpiled and instantiated on this thread, called directly.
    const cache = new ComponentCache(join(root, 'cache'));
    const prepared = await cache.prepare(component);
    const { modules: coreModules, sandbox, componentUrl } = await cache.compile(prepared, 256);
    const { instantiate } = (await import(componentUrl)) as {
      instantiate: (get: (n: string) => unknown, imports: unknown, core: unknown) => Promise<Record<string, { invokeTool(r: ToolCallRequest): unknown }>>;
    };
    const data = { module: 'bench', config: null, filesRoot: null, grants: { llm: 'not-configured', billing: 'not-configured' } } as unknown as GuestWorkerData;
    const instances = new CoreInstances(sandbox, coreModules, new LiftMeter(1024 * 1024, 4 * 1024 * 1024));
    const exports = await instantiate((n) => coreModules[n], chattyImports(data, { log() {}, post() {} }), instances.instantiateCore);
    const direct = exports['chatty:plugin/plugin@0.3.0']!;
    const directStats = await measure(() => direct.invokeTool(REQUEST), 200, 100);
    await cache.close();

    // 3. The worker-thread round trip, as the gateway calls it.
    writeModuleDir(join(root, 'modules'), 'echo', { component, manifest: fixtureManifest('echo') });
    const registry = new ModuleRegistry({ cacheDir: join(root, 'cache'), logger: quiet });
    await registry.scanDirectory(join(root, 'modules'));
    const handle = registry.get('echo')!;
    const workerStats = await measure(() => handle.invokeTool(REQUEST), 2000, 1);
    const pipelinedStats = await measure(() => handle.invokeTool(REQUEST), 200, 32, 32);
    await registry.close();

    // `--calls-only` skips the load timings (to pair two trees' call costs quickly).
    const callsOnly = process.argv.includes('--calls-only');
    const one = callsOnly ? undefined : await loadTimes(1, component);
    const twenty = callsOnly ? undefined : await loadTimes(20, component);

    const fmt = (s: Stats): string =>
      `median ${s.median.toFixed(2).padStart(8)} µs   p99 ${s.p99.toFixed(2).padStart(8)} µs   cpu ${s.cpu.toFixed(1).padStart(6)} µs`;
    const out = [
      'bench/plugin-call: the echo tool, per call',
      `  plain JS function          ${fmt(plainStats)}`,
      `  guest, direct (in-thread)  ${fmt(directStats)}`,
      `  guest, worker round trip   ${fmt(workerStats)}`,
      `  worker, 32 calls in flight ${fmt(pipelinedStats)}   (per call: a batch's time over its 32 calls)`,
      `  ratios (median): direct/plain ${(directStats.median / plainStats.median).toFixed(0)}x, ` +
        `worker/direct ${(workerStats.median / directStats.median).toFixed(1)}x, worker/plain ${(workerStats.median / plainStats.median).toFixed(0)}x`,
      ...(one && twenty
        ? [
            'load (scanDirectory until every worker is ready)',
            `  1 module    cold ${one.cold.toFixed(0).padStart(6)} ms   cached ${one.cached.toFixed(0).padStart(6)} ms`,
            `  20 modules  cold ${twenty.cold.toFixed(0).padStart(6)} ms   cached ${twenty.cached.toFixed(0).padStart(6)} ms`,
          ]
        : []),
      `  (node ${process.version}, ${import.meta.url.endsWith('.ts') ? 'from the TypeScript sources' : 'from out/'})`,
    ];
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
