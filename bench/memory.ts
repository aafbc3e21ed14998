/**
 * bench/memory: what an idle plugin costs the process that serves it, and what waking it costs.
 *
 *   node --import tsx bench/memory.ts [--rounds N] [--counts 0,1,2,10] [--scenarios recorded,first,resident]
 *                                     [--env-b NAME=VALUE,…] [--no-wake] [--idle-only] [--work-dir DIR] [--runners tsx,js] [--help]
 *
 * Each measurement is a fresh child process running a real gateway (ProtocolGateway on a Unix
 * socket over a ModuleRegistry) with 0, 1, 2 or 10 plugins, each a distinct copy of the bundled
 * `json-tools` example (a componentize-js component, 11.5 MiB; a custom section makes each copy's
 * digest its own, so nothing is shared between them). A child reports VmRSS and Threads from its
 * own /proc/self/status (after a full GC, and for the idle points 15 s at rest, which V8 needs
 * before it gives its heap's free pages back, then the lowest of five readings a second apart,
 * each after a full GC) at three points:
 *
 *   idle        loaded and listed (`tools/list` on every plugin), nothing called
 *   called      right after one call to each plugin (their engines running)
 *   stopped     once every engine has stopped for being idle (`engineIdleMs` 5 s here)
 *
 * Rounds interleave the counts, and each figure is printed with its difference to the 0-plugin
 * peer of the same round (median over rounds). Two load scenarios: `recorded` (the tools of these
 * components were recorded by an earlier load, as on every start but the first: the load starts
 * no engine) and `first` (transpile cache warm, no tool records: each load starts the engine to
 * list and record the tools, then stops it); and `resident` (`engineIdleMs: 0`: every engine
 * started at the load and kept, as every plugin was before engines stopped when idle). Last, in one child with one plugin: the first call
 * after an idle stop (engine start with the component cached) beside a warm call, p50 of each.
 *
 * `--env-b` runs every child twice in each round, without and with those environment variables
 * (e.g. `MALLOC_ARENA_MAX=2`), and prints both: a setting an embedder could give its process,
 * measured side by side.
 *
 * The children run from a plain JavaScript copy of the sources (types stripped with esbuild, as
 * the package runs from `out/`; `--runners js`, the default), not under tsx (`--runners tsx`),
 * whose loader thread holds a heap of its own that no `gc()` in the child reaches, 10–35 MB that
 * moved from child to child; `--runners tsx,js` runs both, interleaved.
 *
 * `--against REF --against-paths main/a.ts,…` adds a second JavaScript copy in which those files
 * are taken from git REF: every child runs from both, interleaved, so a change is measured against
 * its before in the same run. Diagnostic: `BENCH_MEMORY_SMAPS=DIR` writes each child's
 * /proc/self/smaps at the idle reading to DIR, to compare children mapping by mapping.
 *
 * `--work-dir DIR` keeps the plugin copies and their transpile cache (with the tool records) in
 * DIR between runs, so a measurement split into several runs (each under the bench lock's few
 * minutes) transpiles them once; without it they go in a fresh temporary folder, removed after.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
/** What `--help` prints: the usage line and the flags. */
const USAGE = `usage: node --import tsx bench/memory.ts [options]
  --rounds N              rounds, each over every count and scenario (default 3)
  --counts 0,1,2,10       plugin counts (0 is always added: every figure is a difference to it)
  --scenarios LIST        recorded, first, resident (default: all three)
  --env-b NAME=VALUE,...  run each child also with these environment variables, side by side
  --no-wake               skip the first-call-after-an-idle-stop measurement
  --idle-only             measure the idle point only (a child takes ~20 s instead of ~40 s)
  --work-dir DIR          keep the plugin copies and their transpile cache in DIR between runs
  --runners tsx,js        run the children from a plain JavaScript copy of the sources (js, the
                          default: as the package runs), under tsx, or both, interleaved
  --against REF           also run every child from a JavaScript copy with --against-paths taken
  --against-paths A,B     from git REF (before/after, interleaved in each round)
  --help                  this`;
const IDLE_MS = 5_000;
const QUIET_MS = 15_000;
/** Readings taken at rest (one a second, each after a full GC); the lowest is the figure. */
const REST_READINGS = 5;

interface Sample {
  rss: number;
  /** VmRSS split: anonymous memory (heaps, WebAssembly memories, malloc) and file-backed pages (the node binary, libraries), MB. */
  anon: number;
  file: number;
  threads: number;
  /** V8's heap (this thread) and memory outside it (ArrayBuffers, compiled WebAssembly), MB. */
  heap: number;
  external: number;
}
interface ChildReport {
  idle: Sample;
  called: Sample;
  stopped: Sample;
  loadMs: number;
}
interface WakeReport {
  coldMs: number[];
  warmMs: number[];
}

function status(): Sample {
  const text = readFileSync('/proc/self/status', 'utf8');
  const { heapTotal, external } = process.memoryUsage();
  return {
    rss: Number(/VmRSS:\s+(\d+)/.exec(text)![1]) / 1024,
    anon: Number(/RssAnon:\s+(\d+)/.exec(text)![1]) / 1024,
    file: Number(/RssFile:\s+(\d+)/.exec(text)![1]) / 1024,
    threads: Number(/Threads:\s+(\d+)/.exec(text)![1]),
    heap: heapTotal / 2 ** 20,
    external: external / 2 ** 20,
  };
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * RSS after the garbage the measured step left is collected: a full GC three times with pauses,
 * then, for a gateway at rest, `QUIET_MS` more: V8 gives its heap's free pages back only once its
 * memory reducer sees the process quiet, as an idle gateway is for minutes on end. At rest the
 * figure is the lowest of `REST_READINGS`, so that one late shrink does not decide it (in the
 * runs so far the readings of one child agreed within 1 MB: the spread between children was
 * tsx's loader thread, which `--runners js` leaves out).
 */
async function settled(quiet = false): Promise<Sample> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) {
    gc?.();
    await pause(250);
  }
  if (!quiet) return status();
  await pause(QUIET_MS);
  let lowest: Sample | undefined;
  for (let i = 0; i < REST_READINGS; i++) {
    if (i > 0) await pause(1_000);
    gc?.();
    const reading = status();
    if (process.env['BENCH_MEMORY_TRACE']) process.stderr.write(`  reading ${i + 1}: ${reading.rss.toFixed(1)} MB (anon ${reading.anon.toFixed(1)}, file ${reading.file.toFixed(1)}, heap ${reading.heap.toFixed(1)})\n`);
    if (lowest === undefined || reading.rss < lowest.rss) lowest = reading;
  }
  return lowest!;
}

// ---------------------------------------------------------------------------------------------
// The child: one gateway, measured.

async function child(modulesDir: string, cacheDir: string, mode: 'prepare' | 'measure' | 'idle' | 'resident' | 'wake'): Promise<void> {
  const { ModuleRegistry } = await import('../main/plugins/index.js');
  const { ProtocolGateway } = await import('../main/gateway/index.js');
  const runtime = mkdtempSync(join(tmpdir(), 'chatty-bench-memory-run-'));
  const registry = new ModuleRegistry({ cacheDir, logger: { log() {} }, engineIdleMs: mode === 'wake' ? 100 : mode === 'resident' ? 0 : IDLE_MS });
  const gateway = new ProtocolGateway(registry, { runtimeDir: join(runtime, 'run') });
  try {
    await gateway.start();
    const t0 = performance.now();
    const report = await registry.scanDirectory(modulesDir);
    const loadMs = performance.now() - t0;
    if (report.failed.length > 0) throw new Error(`not loaded: ${JSON.stringify(report.failed)}`);
    const handles = registry.list();
    const call = (h: (typeof handles)[number]) => h.invokeTool({ name: 'validate', argumentsJson: '{"json":"[1,2]"}', callId: 'bench' });
    if (mode === 'prepare') {
      // Transpiled and the tools recorded by the load: nothing to measure.
      process.send!({ loadMs });
      return;
    }
    if (mode === 'wake') {
      const h = handles[0]!;
      const coldMs: number[] = [];
      const warmMs: number[] = [];
      for (let i = 0; i < 12; i++) {
        while (h.engineState !== 'stopped') await pause(20);
        let t = performance.now();
        const outcome = await call(h);
        coldMs.push(performance.now() - t);
        if (!outcome.ok) throw new Error(JSON.stringify(outcome));
        for (let j = 0; j < 5; j++) {
          t = performance.now();
          await call(h);
          warmMs.push(performance.now() - t);
        }
      }
      process.send!({ coldMs, warmMs } satisfies WakeReport);
      return;
    }
    for (const h of handles) await h.listTools();
    const idle = await settled(true);
    // Diagnostic: the whole mapping list at the idle reading, to compare children mapping by mapping.
    const smapsDir = process.env['BENCH_MEMORY_SMAPS'];
    if (smapsDir) writeFileSync(join(smapsDir, `${basename(modulesDir)}-${process.pid}.smaps`), readFileSync('/proc/self/smaps'));
    if (mode === 'resident' || mode === 'idle') {
      process.send!({ idle, called: idle, stopped: idle, loadMs } satisfies ChildReport);
      return;
    }
    const outcomes = await Promise.all(handles.map(call));
    if (outcomes.some((o) => !o.ok)) throw new Error(JSON.stringify(outcomes));
    const called = await settled();
    while (handles.some((h) => h.engineState !== 'stopped')) await pause(50);
    const stopped = await settled(true);
    process.send!({ idle, called, stopped, loadMs } satisfies ChildReport);
  } finally {
    await gateway.stop();
    await registry.close();
    rmSync(runtime, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// The parent.

/**
 * How a child runs: from the TypeScript sources under tsx, or (`js`) from a plain JavaScript copy
 * of them, as the package runs from `out/`. Under tsx, Node 20 runs tsx's loader on a thread of its
 * own with its own heap, which a child's `gc()` does not reach: it holds the transformed text of
 * every file loaded (more with plugins, which load more of main/plugins) and shrinks on its own
 * clock, ±15 MB from child to child.
 */
type Runner = 'tsx' | 'js' | 'against';
/** The plain JavaScript copy `js` children run (`jsCopy`), once made, and the `--against` one. */
let jsSelf: string | undefined;
let againstSelf: string | undefined;

function runChild<T>(args: string[], env: Record<string, string> = {}, runner: Runner = 'tsx'): Promise<T> {
  return new Promise((resolve, reject) => {
    const entry = runner === 'js' ? ['--expose-gc', jsSelf!] : runner === 'against' ? ['--expose-gc', againstSelf!] : ['--expose-gc', '--import', 'tsx', SELF];
    const proc = spawn(process.execPath, [...entry, '--child', ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, ...env } });
    let report: T | undefined;
    proc.on('message', (msg: T) => (report = msg));
    proc.on('exit', (code) => (report !== undefined ? resolve(report) : reject(new Error(`child ${args.join(' ')} exited ${code} without a report`))));
  });
}

/**
 * main/ and this file with their types stripped (esbuild, as tsx does, file by file), in a folder
 * under the repository's node_modules/.cache: inside the package, so it finds its root
 * (main/plugins/wit) and its dependencies as `out/` does. Returns the copy of this file.
 */
async function jsCopy(against?: { ref: string; paths: string[] }): Promise<string> {
  const { transformSync } = await import('esbuild');
  const repo = join(dirname(SELF), '..');
  const into = join(repo, 'node_modules', '.cache', 'chatty-gateway', `bench-memory-js-${process.pid}${against ? '-against' : ''}`);
  const source = (file: string): string =>
    against?.paths.includes(relative(repo, file)) ? execFileSync('git', ['show', `${against.ref}:${relative(repo, file)}`], { cwd: repo, encoding: 'utf8' }) : readFileSync(file, 'utf8');
  rmSync(into, { recursive: true, force: true });
  const files = [SELF, ...readdirSync(join(repo, 'main'), { recursive: true, encoding: 'utf8' }).map((f) => join(repo, 'main', f))];
  for (const file of files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))) {
    const out = join(into, relative(repo, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, transformSync(source(file), { loader: 'ts', format: 'esm', target: 'node20', sourcefile: file }).code);
  }
  writeFileSync(join(into, 'package.json'), '{"type":"module"}\n');
  return join(into, relative(repo, SELF)).replace(/\.ts$/, '.js');
}

/** `count` distinct copies of the built component, as module directories p0…p(count-1) under `root/<count>/`. */
function writeModules(root: string, source: string, count: number): string {
  const dir = join(root, String(count));
  const wasm = readFileSync(join(source, 'plugin.wasm'));
  const manifest = readFileSync(join(source, 'module.toml'), 'utf8');
  for (let i = 0; i < count; i++) {
    const d = join(dir, `p${i}`);
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, 'module.toml'), manifest.replace(/^name = ".*"$/m, `name = "p${i}"`));
    cpSync(join(source, 'data'), join(d, 'data'), { recursive: true });
    const tag = Buffer.from(`bench-memory-${i}`);
    writeFileSync(join(d, 'plugin.wasm'), Buffer.concat([wasm, Buffer.from([0, tag.length + 1, tag.length]), tag]));
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A copy of the transpile cache without the tool records: a first start. */
function withoutRecords(cacheDir: string, into: string): string {
  rmSync(into, { recursive: true, force: true });
  cpSync(cacheDir, into, { recursive: true, filter: (src) => !/tools-[0-9a-f]+\.json$/.test(src) });
  return into;
}

const SCENARIOS = ['recorded', 'first', 'resident'] as const;
const SCENARIO_TITLES: Record<(typeof SCENARIOS)[number], string> = {
  recorded: 'tools recorded by an earlier load (every start but the first)',
  first: 'first start (transpile cache warm, no tool records)',
  resident: 'engineIdleMs 0, engines resident from the load (what every plugin cost before; nothing stops, so one column)',
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

async function parent(): Promise<void> {
  const arg = (name: string): string | undefined => {
    const at = process.argv.indexOf(name);
    return at >= 0 ? process.argv[at + 1] : undefined;
  };
  if (process.argv.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const rounds = Number(arg('--rounds') ?? 3);
  const idleOnly = process.argv.includes('--idle-only');
  const counts = (arg('--counts') ?? '0,1,2,10').split(',').map(Number);
  if (!counts.includes(0)) counts.unshift(0);
  const envB = Object.fromEntries((arg('--env-b')?.split(',') ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const runners = (arg('--runners') ?? 'js').split(',').filter((r): r is Runner => r === 'tsx' || r === 'js');
  const againstRef = arg('--against');
  if (againstRef !== undefined) {
    againstSelf = await jsCopy({ ref: againstRef, paths: (arg('--against-paths') ?? '').split(',').filter(Boolean) });
    runners.push('against');
  }
  const envs: Array<{ label: string; env: Record<string, string> }> = [{ label: '', env: {} }];
  if (Object.keys(envB).length > 0) envs.push({ label: ` with ${Object.entries(envB).map(([k, v]) => `${k}=${v}`).join(' ')}`, env: envB });
  // Every environment under every runner, interleaved in each round; the runner is named when there are several.
  const variants = runners.flatMap((runner) => envs.map((e) => ({ ...e, runner, label: `${e.label}${runners.length > 1 ? ` (${runner === 'against' ? againstRef : runner})` : ''}` })));
  if (runners.includes('js')) jsSelf = await jsCopy();
  const scenarios = (arg('--scenarios')?.split(',') ?? [...SCENARIOS]).filter((s): s is (typeof SCENARIOS)[number] => (SCENARIOS as readonly string[]).includes(s));
  const { ensureExamplesBuilt } = await import('../main/plugins/index.js');
  const examples = await ensureExamplesBuilt(undefined, { onProgress: (line) => process.stderr.write(`${line}\n`) });
  const workDir = arg('--work-dir');
  if (workDir !== undefined) mkdirSync(workDir, { recursive: true });
  const root = workDir ?? mkdtempSync(join(tmpdir(), 'chatty-bench-memory-'));
  try {
    const cacheDir = join(root, 'cache');
    const dirs = new Map(counts.map((n) => [n, writeModules(root, join(examples, 'json-tools'), n)]));
    // Transpile every copy once and record its tools, so `recorded` rounds start with both.
    await runChild<{ loadMs: number }>([dirs.get(Math.max(...counts))!, cacheDir, 'prepare'], {}, runners[0]);
    const results = new Map<string, ChildReport[]>();
    for (let r = 0; r < rounds; r++) {
      for (const scenario of scenarios) {
        for (const n of counts) for (const variant of variants) {
          const cache = scenario === 'first' ? withoutRecords(cacheDir, join(root, 'cache-first')) : cacheDir;
          const report = await runChild<ChildReport>([dirs.get(n)!, cache, scenario === 'resident' ? 'resident' : idleOnly ? 'idle' : 'measure'], variant.env, variant.runner);
          const key = `${scenario}${variant.label}:${n}`;
          results.set(key, [...(results.get(key) ?? []), report]);
          const shown = (s: Sample): string => `${s.rss.toFixed(0)} MB (anon ${s.anon.toFixed(0)}, file ${s.file.toFixed(0)}, heap ${s.heap.toFixed(0)}, external ${s.external.toFixed(0)}, ${s.threads} threads)`;
          process.stderr.write(`round ${r + 1} ${key}: idle ${shown(report.idle)}, called ${shown(report.called)}, stopped ${shown(report.stopped)}, load ${report.loadMs.toFixed(0)} ms\n`);
        }
      }
    }
    const wake = process.argv.includes('--no-wake') ? undefined : await runChild<WakeReport>([dirs.get(1) ?? writeModules(root, join(examples, 'json-tools'), 1), cacheDir, 'wake'], {}, runners[runners.length - 1]);

    const lines = [`bench/memory: a gateway's RSS (MB) and threads, json-tools copies, median of ${rounds} interleaved rounds; Δ = minus the 0-plugin peer of the same round`];
    for (const scenario of scenarios) for (const variant of variants) {
      lines.push(`  ${SCENARIO_TITLES[scenario]}${variant.label}`);
      lines.push('  plugins | idle RSS   Δ      thr | after one call each RSS   Δ     thr | engines stopped RSS   Δ     thr | load ms');
      for (const n of counts) {
        const mine = results.get(`${scenario}${variant.label}:${n}`)!;
        const peers = results.get(`${scenario}${variant.label}:0`)!;
        const cell = (point: 'idle' | 'called' | 'stopped'): string => {
          const rss = median(mine.map((m) => m[point].rss));
          const delta = median(mine.map((m, i) => m[point].rss - peers[i]![point].rss));
          const thr = median(mine.map((m) => m[point].threads));
          return `${rss.toFixed(0).padStart(5)} ${(delta >= 0 ? '+' : '') + delta.toFixed(1)}`.padEnd(14) + String(thr).padStart(4);
        };
        const later = idleOnly ? `${''.padStart(27)} | ${''.padStart(24)}` : `${cell('called').padStart(27)} | ${cell('stopped').padStart(24)}`;
        lines.push(`  ${String(n).padStart(7)} | ${cell('idle')} | ${later} | ${median(mine.map((m) => m.loadMs)).toFixed(0).padStart(7)}`);
      }
    }
    if (wake) {
      lines.push(
        `  one plugin, p50 of ${wake.coldMs.length}: first call after an idle stop ${median(wake.coldMs).toFixed(1)} ms (engine start, component cached), ` +
          `warm call ${median(wake.warmMs).toFixed(2)} ms: ${(median(wake.coldMs) / median(wake.warmMs)).toFixed(0)}x`,
      );
    }
    lines.push(
      `  (node ${process.version}, children run ${runners.map((r) => (r === 'js' ? 'from a plain JavaScript copy of the sources' : r === 'against' ? `from a copy with ${arg('--against-paths')} at ${arg('--against')}` : 'from the TypeScript sources under tsx')).join(' and ')}, ${execFileSync('nproc').toString().trim()} cores)`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    if (workDir === undefined) rmSync(root, { recursive: true, force: true });
    for (const copy of [jsSelf, againstSelf]) if (copy !== undefined) rmSync(join(dirname(copy), '..'), { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') {
  await child(process.argv[3]!, process.argv[4]!, process.argv[5] as 'prepare' | 'measure' | 'idle' | 'resident' | 'wake');
} else {
  await parent();
}
