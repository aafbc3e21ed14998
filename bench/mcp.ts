/**
 * MCP `tools/call` throughput and latency through the gateway, to the WASM echo tool, next to
 * (a) a bare `node:http` server on a Unix socket answering a fixed JSON body (the ceiling) and
 * (b) the official SDK's `McpServer` (stateless, `enableJsonResponse: true`) serving the same tool
 * in plain JS. Each server runs in its own child process; the load comes from this process over
 * keep-alive connections on the Unix socket (undici), at concurrency 1 and 32.
 *
 *   node --import tsx bench/mcp.ts [--requests N] [--rounds N] [--only bare,gateway,gateway-js,sdk] [--tsx] [--against REF [--against-paths a,b] [--before-env K=V,…]] [--js-echo] [--conc 1|32] [--each-round]
 *
 * The gateway children run the compiled JavaScript: the parent first compiles the project with
 * tsc into `tmp/bench-mcp/` (git-ignored), because tsx's transform keeps function names with a
 * `__name(...)` call per closure created, which costs measurable time on the request path. `--tsx`
 * runs the gateway from source instead. `gateway-js` (not in the default run) is the gateway with a
 * plain JS echo module: its HTTP and MCP path without the WASM worker.
 *
 * `--against REF` adds `gateway-before`: the gateway of git revision REF (its `main/` taken with
 * `git archive`, compiled into `tmp/bench-mcp-before/`), driven in the same interleaved rounds as
 * today's tree, so a change is judged by a before/after pair from one run on the same machine.
 * `--against-paths a,b` takes only those paths from REF and the rest of `main/` from today's tree.
 * With `--against`, the pair is also reported round by round (medians over the rounds of each
 * side's main-thread CPU a request and req/s, and of the after/before ratio within a round), which
 * on a shared machine is steadier than the best rounds. `--js-echo` makes both gateway children
 * serve the plain JS echo (no WASM worker): the HTTP and MCP path alone. Each server child also
 * sums its main thread's GC pauses (`PerformanceObserver` `gc` entries): `gc` in the round rows
 * (`--each-round`) and on the pair line, per request.
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { join } from 'node:path';
import { Pool } from 'undici';
import { extractRefSources } from './ref-sources.js';

type ServerKind = 'gateway' | 'bare' | 'sdk' | 'gateway-js' | 'gateway-before';
interface Ready {
  socketPath: string;
  token: string;
}

const ARGS = { msg: 'hello from the bench' };
const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: ARGS } });
const EXPECTED_TEXT = JSON.stringify(JSON.stringify(ARGS)); // the echoed text as it sits inside the answer's JSON
const FIXED_ANSWER = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: JSON.stringify(ARGS) }] } });

/** Where the gateway runs from: `tmp/bench-mcp/` (built by the parent with tsc) unless `--tsx`. */
const BUILT_DIR = new URL('../tmp/bench-mcp/', import.meta.url);
/** `--against REF`: REF's `main/` (from `git archive`) in `src/`, compiled into `out/`. */
const BEFORE_DIR = new URL('../tmp/bench-mcp-before/', import.meta.url);
const FROM_SOURCE = process.argv.includes('--tsx');
/** `--js-echo`: every gateway child serves the JS echo (no WASM worker). */
const JS_ECHO = process.argv.includes('--js-echo');

async function gatewayModules(kind: ServerKind): Promise<{
  ProtocolGateway: typeof import('../main/gateway/index.js').ProtocolGateway;
  ModuleRegistry: typeof import('../main/plugins/index.js').ModuleRegistry;
}> {
  if (FROM_SOURCE && kind !== 'gateway-before') {
    return { ...(await import('../main/gateway/index.js')), ...(await import('../main/plugins/index.js')) };
  }
  const built = kind === 'gateway-before' ? new URL('out/', BEFORE_DIR) : BUILT_DIR;
  const gateway = (await import(new URL('main/gateway/index.js', built).href)) as typeof import('../main/gateway/index.js');
  const plugins = (await import(new URL('main/plugins/index.js', built).href)) as typeof import('../main/plugins/index.js');
  return { ProtocolGateway: gateway.ProtocolGateway, ModuleRegistry: plugins.ModuleRegistry };
}

// ------------------------------------------------------------------------------------------------
// Children: one server each, on a Unix socket in a private temp dir.

interface CpuSample {
  /** The whole process (every thread), µs. */
  cpuMicros: number;
  /** Per thread (Linux: /proc/self/task/<tid>/schedstat), µs on a CPU; empty elsewhere. */
  threads: Record<string, number>;
  /** The main thread's garbage collections so far (their pauses, as \`PerformanceObserver\` reports them), µs. */
  gcMicros: number;
}

/** Each thread's time on a CPU, so the gateway's main thread and its plugin worker can be told apart. */
function threadCpu(): Record<string, number> {
  const out: Record<string, number> = {};
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      try {
        out[tid] = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
      } catch {
        // the thread ended meanwhile
      }
    }
  } catch {
    // not Linux
  }
  return out;
}

async function serve(kind: ServerKind, dir: string): Promise<Ready> {
  switch (kind) {
    case 'bare': {
      const socketPath = join(dir, 'bare.sock');
      const answer = Buffer.from(FIXED_ANSWER);
      const server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
          res.end(answer);
        });
      });
      await new Promise<void>((resolve) => server.listen(socketPath, resolve));
      return { socketPath, token: '' };
    }
    case 'sdk': {
      const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
      const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
      const { z } = await import('zod');
      const socketPath = join(dir, 'sdk.sock');
      // The SDK's stateless pattern: a server and a transport per request.
      const server = createServer((req, res) => {
        const mcp = new McpServer({ name: 'echo', version: '1.0.0' });
        mcp.registerTool('echo', { description: 'Returns its arguments.', inputSchema: { msg: z.string() } }, async (args) => ({
          content: [{ type: 'text', text: JSON.stringify(args) }],
        }));
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        res.on('close', () => {
          void transport.close();
          void mcp.close();
        });
        mcp
          .connect(transport)
          .then(() => transport.handleRequest(req, res))
          .catch((err: unknown) => {
            console.error(err);
            res.statusCode = 500;
            res.end();
          });
      });
      await new Promise<void>((resolve) => server.listen(socketPath, resolve));
      return { socketPath, token: '' };
    }
    case 'gateway-js':
    case 'gateway-before':
    case 'gateway': {
      const { ProtocolGateway, ModuleRegistry } = await gatewayModules(kind);
      let directory: import('../main/gateway/index.js').ModuleDirectory;
      // `--js-echo`: every gateway child (today's and `--against`'s) serves the JS echo, to pair changes to the HTTP path alone.
      if (kind === 'gateway-js' || JS_ECHO) {
        // The gateway's HTTP and MCP path alone: the same echo as a plain JS module, no WASM worker.
        const echo = {
          name: 'echo', version: '1.0.0', description: '', protocols: { mcp: true, a2a: false },
          listTools: async () => [],
          invokeTool: async (r: { argumentsJson: string }) => ({ ok: true as const, value: { content: r.argumentsJson } }),
        };
        directory = { list: () => [echo], get: (n) => (n === 'echo' ? echo : undefined) };
      } else {
        const { buildFixture, writeModuleDir } = await import('../test/helpers/wasm-fixtures.js');
        const modules = join(dir, 'modules');
        writeModuleDir(modules, 'echo', { component: await buildFixture('echo') });
        const registry = new ModuleRegistry({ cacheDir: join(dir, 'cache'), logger: { log: () => {} } });
        const report = await registry.scanDirectory(modules);
        if (report.failed.length > 0) throw new Error(JSON.stringify(report.failed));
        directory = registry;
      }
      const gateway = new ProtocolGateway(directory, { runtimeDir: join(dir, `run-${kind}`) });
      const { socketPath } = await gateway.start();
      return { socketPath, token: gateway.token() };
    }
  }
}

if (process.argv[2] === '--serve') {
  const kind = process.argv[3] as ServerKind;
  const dir = process.argv[4]!;
  const ready = await serve(kind, dir);
  process.send!(ready);
  // The main thread's GC pauses, summed: a request's share says whether its objects die young.
  let gcMicros = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMicros += entry.duration * 1000;
  }).observe({ entryTypes: ['gc'] });
  // The parent asks for this process's CPU time (every thread) around each measurement.
  process.on('message', () => {
    const { user, system } = process.cpuUsage();
    process.send!({ cpuMicros: user + system, threads: threadCpu(), gcMicros } satisfies CpuSample);
  });
  process.on('disconnect', () => process.exit(0));
} else {
  await main();
}

// ------------------------------------------------------------------------------------------------
// The parent: start each server, drive it, report.

interface Result {
  kind: ServerKind;
  concurrency: number;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  /** The server process's CPU time (all its threads) per request. */
  cpuMicrosPerRequest: number;
  /** The server's main thread alone, and its busiest other thread (the gateway's plugin worker), per request. */
  mainMicrosPerRequest: number | undefined;
  otherMicrosPerRequest: number | undefined;
  /** The server's main-thread GC pauses per request. */
  gcMicrosPerRequest: number;
  /** The load generator (this process) per request. */
  clientMicrosPerRequest: number;
}

async function startChild(kind: ServerKind, dir: string): Promise<{ child: ChildProcess; ready: Ready }> {
  // `--before-env K=V,…` sets those variables for the `gateway-before` child only (to pair a tunable's two settings).
  const beforeEnv = kind === 'gateway-before' ? argOf('--before-env') : undefined;
  const env = beforeEnv === undefined ? process.env : { ...process.env, ...Object.fromEntries(beforeEnv.split(',').map((kv) => kv.split('=') as [string, string])) };
  const child = fork(new URL(import.meta.url).pathname, ['--serve', kind, dir, ...process.argv.slice(2)], {
    env,
    // BENCH_MCP_PROF=<dir> writes a CPU profile of each server child there (BENCH_MCP_PROF_INTERVAL: µs between samples, default 1000).
    // BENCH_MCP_CHILD_FLAGS="--trace-pretenuring …" adds Node/V8 flags to every server child (space-separated).
    execArgv: [
      ...process.execArgv,
      ...(process.env.BENCH_MCP_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_MCP_PROF}`, `--cpu-prof-interval=${process.env.BENCH_MCP_PROF_INTERVAL ?? 1000}`] : []),
      ...(process.env.BENCH_MCP_CHILD_FLAGS?.split(' ').filter((f) => f !== '') ?? []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Ready));
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
  return { child, ready };
}

function cpuOf(child: ChildProcess): Promise<CpuSample> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as CpuSample));
    child.send('cpu');
  });
}

/** Main thread and busiest other thread, µs over the interval, when the platform tells. */
function threadSplit(child: ChildProcess, a: CpuSample, b: CpuSample): { main: number | undefined; other: number | undefined } {
  const main = String(child.pid);
  if (a.threads[main] === undefined || b.threads[main] === undefined) return { main: undefined, other: undefined };
  let other = 0;
  for (const [tid, us] of Object.entries(b.threads)) if (tid !== main) other = Math.max(other, us - (a.threads[tid] ?? 0));
  return { main: b.threads[main]! - a.threads[main]!, other };
}

async function drive(kind: ServerKind, child: ChildProcess, ready: Ready, concurrency: number, requests: number): Promise<Result> {
  const pool = new Pool('http://localhost', { connect: { socketPath: ready.socketPath }, connections: concurrency, pipelining: 1 });
  const headers = {
    authorization: `Bearer ${ready.token}`,
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
  };
  const one = async (): Promise<number> => {
    const started = performance.now();
    const res = await pool.request({ method: 'POST', path: '/mcp/echo', headers, body: BODY });
    const text = await res.body.text();
    const elapsed = performance.now() - started;
    if (res.statusCode !== 200 || !text.includes(EXPECTED_TEXT)) throw new Error(`${kind}: unexpected answer ${res.statusCode} ${text.slice(0, 200)}`);
    return elapsed;
  };
  // Warm-up: connections open, JITs settle.
  const warm = Math.min(2000, requests / 4);
  await runLoad(one, concurrency, warm);
  const latencies: number[] = [];
  const cpu0 = await cpuOf(child);
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  await runLoad(async () => latencies.push(await one()), concurrency, requests);
  const seconds = (performance.now() - t0) / 1000;
  const own = process.cpuUsage(own0);
  const cpu1 = await cpuOf(child);
  const cpu = cpu1.cpuMicros - cpu0.cpuMicros;
  const split = threadSplit(child, cpu0, cpu1);
  await pool.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { kind, concurrency, requests, rps: requests / seconds, p50: at(0.5), p99: at(0.99),
    cpuMicrosPerRequest: cpu / requests,
    mainMicrosPerRequest: split.main === undefined ? undefined : split.main / requests,
    otherMicrosPerRequest: split.other === undefined ? undefined : split.other / requests,
    gcMicrosPerRequest: (cpu1.gcMicros - cpu0.gcMicros) / requests,
    clientMicrosPerRequest: (own.user + own.system) / requests,
  };
}

/** `total` calls of `fn`, at most `concurrency` at once. */
async function runLoad(fn: () => Promise<unknown>, concurrency: number, total: number): Promise<void> {
  let started = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < total) {
        started++;
        await fn();
      }
    }),
  );
}

/** Compiles the project into `tmp/bench-mcp/`; errors in files the gateway does not load are tolerated. */
function buildGateway(): void {
  const root = fileURLToPath(new URL('../', import.meta.url));
  compile(join(root, 'tsconfig.build.json'), fileURLToPath(BUILT_DIR));
}

/**
 * Compiles the gateway as it was at revision `ref` into `tmp/bench-mcp-before/out/`: REF's `main/`,
 * or, with `paths`, today's `main/` with only those files (or folders) taken from REF, so other
 * uncommitted work in the checkout is on both sides of the pair. The sources sit inside this
 * checkout, so their imports find the same `node_modules`.
 */
function buildBefore(ref: string, paths: readonly string[]): void {
  const root = fileURLToPath(new URL('../', import.meta.url));
  const dir = fileURLToPath(BEFORE_DIR);
  rmSync(dir, { recursive: true, force: true });
  const src = join(dir, 'src');
  extractRefSources(root, ref, paths, src);
  const tsconfig = { extends: join(root, 'tsconfig.json'), compilerOptions: { noEmit: false, rootDir: '.' }, include: ['main/**/*.ts'] };
  writeFileSync(join(src, 'tsconfig.json'), JSON.stringify(tsconfig));
  compile(join(src, 'tsconfig.json'), join(dir, 'out'));
}

function compile(project: string, outDir: string): void {
  const root = fileURLToPath(new URL('../', import.meta.url));
  try {
    execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', project, '--outDir', outDir], { stdio: 'ignore' });
  } catch {
    // tsc exits non-zero on any type error but still emits; what matters is that the gateway was emitted.
  }
  if (!existsSync(join(outDir, 'main/gateway/index.js'))) throw new Error(`the gateway was not built into ${outDir}`);
}

function argOf(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
}

async function main(): Promise<void> {
  const arg = argOf;
  const requests = Number(arg('--requests') ?? 10_000);
  const rounds = Number(arg('--rounds') ?? 3);
  // `--conc 32` (or `1`): drive only that concurrency, for more rounds of a pair in the same time.
  const concurrencies = arg('--conc')?.split(',').map(Number);
  const only = arg('--only');
  const kinds = (only ? only.split(',') : ['bare', 'gateway', 'sdk']) as ServerKind[];
  const against = arg('--against');
  if (against !== undefined && !kinds.includes('gateway-before')) kinds.splice(kinds.indexOf('gateway') + 1, 0, 'gateway-before');
  // `--no-build` reuses what is in tmp/bench-mcp/ (to try a change to the compiled code).
  const build = !process.argv.includes('--no-build');
  if (!FROM_SOURCE && build && kinds.some((k) => k === 'gateway' || k === 'gateway-js')) buildGateway();
  if (against !== undefined && build) buildBefore(against, arg('--against-paths')?.split(',') ?? []);
  const dir = mkdtempSync(join(tmpdir(), 'chatty-bench-mcp-'));
  const children = new Map<ServerKind, { child: ChildProcess; ready: Ready }>();
  const rows: Result[][] = [];
  try {
    for (const kind of kinds) children.set(kind, await startChild(kind, dir));
    // Rounds interleave the servers, so a burst of load from elsewhere on the machine hits one
    // round of each rather than all of one; each cell keeps its best round.
    for (let round = 0; round < rounds; round++) {
      for (const [kind, { child, ready }] of children) {
        for (const [i, concurrency] of [1, 32].entries()) {
          if (concurrencies !== undefined && !concurrencies.includes(concurrency)) continue;
          // The SDK server is far slower; fewer requests keep the run short. Concurrency 1 gets a quarter.
          const n = kind === 'sdk' ? Math.max(1000, requests / 5) : requests;
          const result = await drive(kind, child, ready, concurrency, concurrency === 1 ? Math.max(1000, n / 4) : n);
          const cell = kinds.indexOf(kind) * 2 + i;
          (rows[cell] ??= []).push(result);
        }
      }
    }
  } finally {
    for (const { child } of children.values()) {
      child.disconnect();
      await new Promise((resolve) => child.once('exit', resolve));
    }
    rmSync(dir, { recursive: true, force: true });
  }
  report(rows, rounds);
}

function report(rows: Result[][], rounds: number): void {
  const best = (cell: Result[]) => cell.reduce((a, b) => (b.rps > a.rps ? b : a));
  // A concurrency left out (`--conc`) leaves its cells empty.
  const results: (Result | undefined)[] = Array.from(rows, (cell) => (cell ? best(cell) : undefined));
  const cpu = cpus();
  console.log(`MCP tools/call, echo tool; ${cpu.length} × ${cpu[0]?.model ?? 'cpu'}; node ${process.version}; gateway ${FROM_SOURCE ? 'from source through tsx' : 'compiled by tsc'}; best of ${rounds} interleaved rounds (req/s range over the rounds in brackets)`);
  console.log('');
  const name: Record<ServerKind, string> = {
    bare: 'bare node:http (ceiling)',
    gateway: JS_ECHO ? 'gateway → JS echo' : 'gateway → WASM echo',
    'gateway-js': 'gateway → JS echo (no WASM)',
    'gateway-before': JS_ECHO ? 'gateway → JS echo, --against' : 'gateway → WASM echo, --against',
    sdk: 'SDK McpServer (stateless JSON)',
  };
  console.log(
    `${'server'.padEnd(32)} ${'conc'.padStart(4)} ${'requests'.padStart(8)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'cpu µs/req'.padStart(10)} ${'main'.padStart(5)} ${'other'.padStart(5)} ${'client'.padStart(6)}  ${'rounds req/s'}`,
  );
  const us = (v: number | undefined, width: number): string => (v === undefined ? '-' : v.toFixed(0)).padStart(width);
  for (const [i, r] of results.entries()) {
    if (!r) continue;
    const spread = rows[i]!.map((x) => x.rps);
    console.log(
      `${name[r.kind].padEnd(32)} ${String(r.concurrency).padStart(4)} ${String(r.requests).padStart(8)} ${r.rps.toFixed(0).padStart(9)} ${r.p50.toFixed(3).padStart(8)} ${r.p99.toFixed(3).padStart(8)} ${r.cpuMicrosPerRequest.toFixed(0).padStart(10)} ${us(r.mainMicrosPerRequest, 5)} ${us(r.otherMicrosPerRequest, 5)} ${us(r.clientMicrosPerRequest, 6)}  [${Math.min(...spread).toFixed(0)}–${Math.max(...spread).toFixed(0)}]`,
    );
  }
  if (process.argv.includes('--each-round')) {
    console.log('');
    for (const cell of rows) {
      // A concurrency left out (`--conc`) has no cell.
      for (const [round, r] of (cell ?? []).entries()) {
        console.log(`${name[r.kind].padEnd(32)} ${String(r.concurrency).padStart(4)} round ${round + 1}: ${r.rps.toFixed(0).padStart(6)} req/s, p50 ${r.p50.toFixed(3)} ms, cpu ${r.cpuMicrosPerRequest.toFixed(0)} µs/req (main ${us(r.mainMicrosPerRequest, 0)}, other ${us(r.otherMicrosPerRequest, 0)}, gc ${r.gcMicrosPerRequest.toFixed(1)})`);
      }
    }
  }
  console.log('');
  // Issue 21's targets, from the best rounds and round by round (each round runs every server
  // back to back, so a round's ratio is the fairest pair this machine gives).
  const get = (kind: ServerKind, c: number): Result | undefined => results.find((r) => r?.kind === kind && r.concurrency === c);
  const perRound = (kind: ServerKind, c: number, of: (g: Result, b: Result) => number): number[] => {
    const g = rows[serversOf(results).indexOf(kind) * 2 + (c === 1 ? 0 : 1)];
    const b = rows[serversOf(results).indexOf('bare') * 2 + (c === 1 ? 0 : 1)];
    return g && b ? g.map((x, i) => of(x, b[i]!)) : [];
  };
  const range = (xs: number[], digits: number): string => {
    const sorted = [...xs].sort((a, b) => a - b);
    return sorted.length === 0 ? '' : ` (rounds: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(digits)}, ${sorted[0]!.toFixed(digits)}–${sorted.at(-1)!.toFixed(digits)})`;
  };
  for (const kind of ['gateway', 'gateway-before'] as const) {
    const bare1 = get('bare', 1);
    const gw1 = get(kind, 1);
    if (bare1 && gw1) {
      const p50 = gw1.p50 / bare1.p50;
      console.log(`${kind.padEnd(14)} concurrency  1: p50 ${p50.toFixed(2)}× bare's (target ≤ 2×: ${p50 <= 2 ? 'met' : 'MISSED'})${range(perRound(kind, 1, (g, b) => g.p50 / b.p50), 2)}`);
    }
    const gw32 = get(kind, 32);
    const bare32 = get('bare', 32);
    if (!gw32 || !bare32) continue;
    const vsBare = gw32.rps / bare32.rps;
    const sdk32 = get('sdk', 32);
    const vsSdk = sdk32 ? `, ${(gw32.rps / sdk32.rps).toFixed(2)}× the SDK (target ≥ 8×: ${gw32.rps / sdk32.rps >= 8 ? 'met' : 'MISSED'})` : '';
    console.log(`${kind.padEnd(14)} concurrency 32: ${vsBare.toFixed(2)} of bare (target ≥ 0.5: ${vsBare >= 0.5 ? 'met' : 'MISSED'})${range(perRound(kind, 32, (g, b) => g.rps / b.rps), 2)}${vsSdk}`);
  }
  // The pair, round by round: each round drove both sides back to back.
  const servers = serversOf(results);
  if (!servers.includes('gateway-before') || !servers.includes('gateway')) return;
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  for (const [i, c] of [1, 32].entries()) {
    const after = rows[servers.indexOf('gateway') * 2 + i];
    const before = rows[servers.indexOf('gateway-before') * 2 + i];
    if (!after || !before) continue;
    const main = (r: Result): number => r.mainMicrosPerRequest ?? r.cpuMicrosPerRequest;
    const pairs = after.map((a, round) => ({ a, b: before[round]! }));
    console.log(
      `pair, concurrency ${String(c).padStart(2)}, medians over ${pairs.length} rounds: main thread ${median(after.map(main)).toFixed(1)} against ${median(before.map(main)).toFixed(1)} µs/req (within a round ${median(pairs.map(({ a, b }) => main(a) / main(b))).toFixed(3)}×; least ${Math.min(...after.map(main)).toFixed(1)} against ${Math.min(...before.map(main)).toFixed(1)}), ` +
        `req/s ${median(after.map((r) => r.rps)).toFixed(0)} against ${median(before.map((r) => r.rps)).toFixed(0)} (${median(pairs.map(({ a, b }) => a.rps / b.rps)).toFixed(3)}×), p50 ${median(pairs.map(({ a, b }) => a.p50 / b.p50)).toFixed(3)}×, ` +
        `main-thread GC ${median(after.map((r) => r.gcMicrosPerRequest)).toFixed(1)} against ${median(before.map((r) => r.gcMicrosPerRequest)).toFixed(1)} µs/req`,
    );
  }
}

/** The servers of a run, in the order their rows were made. */
function serversOf(results: readonly (Result | undefined)[]): ServerKind[] {
  const out: ServerKind[] = [];
  for (const r of results) if (r && !out.includes(r.kind)) out.push(r.kind);
  return out;
}
