import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from '@bytecodealliance/jco-transpile/wasm-tools';
import { PluginCallError, type ModuleHandle } from '../../main/plugins/index.js';
import { capCoreModule, shapeOfCoreModule } from '../../main/plugins/inspect/core-limits.js';
import { Wasm, type WasmMemory } from '../../main/plugins/wasm-api.js';
import { HostInputTooLarge, LiftMeter, OutputTooLarge } from '../../main/plugins/worker/lift-meter.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

const isKind = (kind: string) => (err: unknown) => err instanceof PluginCallError && err.kind === kind;
const call = (handle: ModuleHandle, name: string, argumentsJson = '"x"') => handle.invokeTool({ name, argumentsJson, callId: name });

describe('per-call limits', () => {
  let fx: LoadedFixtures;
  const get = (name: string): ModuleHandle => {
    const handle = fx.registry.get(name);
    assert.ok(handle, `${name} is loaded`);
    return handle;
  };

  before(async () => {
    fx = await loadFixtures([
      { name: 'loop', kind: 'loop', extra: '[resources]\nmax_execution_ms = 300\n' },
      { name: 'loop-list-tools', kind: 'loop-list-tools' },
      { name: 'trap', kind: 'trap' },
      { name: 'big', kind: 'big-output' },
      { name: 'grow', kind: 'grow', extra: '[resources]\nmax_memory_mb = 8\n' },
      { name: 'slow', kind: 'slow' },
      { name: 'echo', kind: 'echo' },
    ]);
    assert.deepEqual(fx.report.failed, []);
  });
  after(() => fx.close());

  it('stops a looping guest at its limit, and the next call to the module succeeds', async () => {
    const loop = get('loop');
    const started = performance.now();
    await assert.rejects(call(loop, 'loop'), isKind('timeout'));
    const took = performance.now() - started;
    // Not before its 300 ms; the upper bound only has to tell 300 ms from never stopped (or the
    // 60 s default): 20 s does, however loaded the machine.
    assert.ok(took >= 290 && took < 20_000, `stopped after ${took} ms`);
    assert.deepEqual(await call(loop, 'echo', '"after"'), { ok: true, value: { content: '"after"', usage: undefined } });
    assert.equal(loop.stats.timeouts, 1);
    assert.ok(fx.logs.some((l) => l.level === 'warn' && /ran past 300 ms/.test(l.message)));
  });

  it('keeps the queue going after a timeout', async () => {
    const loop = get('loop');
    const first = call(loop, 'loop');
    const second = call(loop, 'echo', '"queued"');
    await assert.rejects(first, isKind('timeout'));
    assert.deepEqual(await second, { ok: true, value: { content: '"queued"', usage: undefined } });
  });

  it('gives metadata and list-tools 1 s', async () => {
    const handle = get('loop-list-tools');
    const started = performance.now();
    await assert.rejects(handle.listTools(), isKind('timeout'));
    const took = performance.now() - started;
    // Not before its 1 s; 20 s tells it from a listing given the calls' 60 s default, or never stopped.
    assert.ok(took >= 990 && took < 20_000, `stopped after ${took} ms`);
    assert.equal((await handle.metadata()).name, 'fixture-loop-list-tools');
  });

  it('fails a trapping call and the next call works', async () => {
    const trap = get('trap');
    // A trap keeps its own message; memory is not mentioned when memory is not the cause.
    await assert.rejects(call(trap, 'trap'), (err: unknown) => isKind('trap')(err) && /unreachable/.test((err as Error).message) && !/linear memory/.test((err as Error).message));
    assert.deepEqual(await call(trap, 'echo', '"alive"'), { ok: true, value: { content: '"alive"', usage: undefined } });
    assert.equal(trap.stats.traps, 1);
  });

  it('refuses a 2 MiB output with output_too_large, never relaying it, and the next call works', async () => {
    const big = get('big');
    await assert.rejects(call(big, 'big'), (err: unknown) => {
      assert.ok(isKind('output_too_large')(err));
      assert.match((err as Error).message, /over the 1048576-byte cap \(2097152 bytes read so far\)/);
      assert.ok((err as Error).message.length < 200);
      return true;
    });
    assert.deepEqual(await call(big, 'echo', '"small"'), { ok: true, value: { content: '"small"', usage: undefined } });
  });

  it('bounds linear memory by max_memory_mb: growth past it is refused inside the guest', async () => {
    const grow = get('grow');
    await assert.rejects(call(grow, 'grow'), (err: unknown) => {
      assert.ok(isKind('trap')(err));
      const m = /linear memory ([\d.]+) MiB of its 8 MiB cap/.exec((err as Error).message);
      assert.ok(m, (err as Error).message);
      assert.ok(Number(m[1]) <= 8);
      return true;
    });
    assert.equal((await call(grow, 'echo')).ok, true);
  });

  it('queues calls to one module in order', async () => {
    const slow = get('slow');
    const order: string[] = [];
    const a = call(slow, 'slow', '150').then(() => order.push('slow'));
    const b = call(slow, 'echo', '"b"').then(() => order.push('echo'));
    assert.equal(slow.queued, 1);
    await Promise.all([a, b]);
    assert.deepEqual(order, ['slow', 'echo']);
  });

  it('while module A runs an 8 s call, 20 calls to module B all finish before it ends', async () => {
    // Proven by order, not by latency: had B's calls waited on A (one lock, one thread, a main
    // thread held), the first of them would finish after A. A runs 8 s so that 20 calls on a
    // loaded machine still fit in it; their latencies are printed, never asserted.
    const slow = get('slow');
    const echo = get('echo');
    await call(echo, 'echo'); // warm
    let aDone = false;
    const aStarted = performance.now();
    const a = call(slow, 'slow', '8000').then((r) => {
      aDone = true;
      return r;
    });
    const latencies: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      const r = await call(echo, 'echo', `{"i":${i}}`);
      latencies.push(performance.now() - t0);
      assert.deepEqual(r, { ok: true, value: { content: `{"i":${i}}`, usage: undefined } });
    }
    assert.equal(aDone, false, 'the 20 calls finished while A was still running');
    latencies.sort((x, y) => x - y);
    console.log(`# B's calls beside A: median ${latencies[10]!.toFixed(1)} ms, slowest ${latencies[19]!.toFixed(1)} ms`);
    assert.equal((await a).ok, true);
    assert.ok(performance.now() - aStarted >= 7990);
  });
});

describe('the lift meter (unit)', () => {
  it('charges what is read with no guest function on the stack to the open call, up to the cap', () => {
    const meter = new LiftMeter(1024 * 1024, 4 * 1024 * 1024);
    meter.chargeText(10 * 1024 * 1024); // no call open: not an answer
    meter.begin('invoke-tool');
    meter.chargeText(1024 * 1024);
    meter.chargeStruct(16);
    assert.throws(() => meter.chargeText(1), (err: unknown) => err instanceof OutputTooLarge && err.limit === 1024 * 1024);
    meter.end();
    meter.begin('list-tools');
    assert.throws(() => { for (let i = 0; i < 50_000; i++) meter.chargeStruct(24); }, OutputTooLarge);
    meter.end();
  });

  it('reads while a guest function runs belong to a host call: bounded per string, never the answer', () => {
    const meter = new LiftMeter(1024 * 1024, 4 * 1024 * 1024);
    const exports = meter.wrapExports({
      run: (n: number) => meter.chargeText(n), // as jco's import trampoline would, inside the guest
      memory: 'not a function',
    });
    meter.begin('invoke-tool');
    (exports['run'] as (n: number) => void)(3 * 1024 * 1024);
    assert.equal(meter.read.text, 0);
    assert.throws(() => (exports['run'] as (n: number) => void)(5 * 1024 * 1024), HostInputTooLarge);
    assert.equal(exports['memory'], 'not a function');
    meter.chargeText(1024 * 1024); // back at depth 0: the answer
    assert.equal(meter.read.text, 1024 * 1024);
    meter.end();
  });
});

describe('memory and table capping (unit)', () => {
  const caps = (memoryPages: number, tableEntries = 1000) => ({ memoryPages, tableEntries });

  it('lowers a defined memory\'s maximum and keeps a smaller one', async () => {
    const uncapped = await parse('(module (memory (export "memory") 1))');
    const capped = capCoreModule(uncapped, caps(4));
    const { exports } = new Wasm.Instance(await Wasm.compile(capped));
    const memory = exports['memory'] as WasmMemory;
    assert.equal(memory.grow(3), 1);
    assert.throws(() => memory.grow(1), RangeError);
    const small = await parse('(module (memory (export "memory") 1 2))');
    const still = new Wasm.Instance(await Wasm.compile(capCoreModule(small, caps(4)))).exports['memory'] as WasmMemory;
    assert.equal(still.grow(1), 1);
    assert.throws(() => still.grow(1), RangeError);
  });

  it('caps imported memories and refuses a module that starts over the cap', async () => {
    const importer = await parse('(module (import "env" "memory" (memory 1)) (func (export "f")))');
    const capped = capCoreModule(importer, caps(2));
    const tooBig = new Wasm.Memory({ initial: 1, maximum: 3 });
    assert.throws(() => new Wasm.Instance(new Wasm.Module(capped), { env: { memory: tooBig } }), /memory/i);
    new Wasm.Instance(new Wasm.Module(capped), { env: { memory: new Wasm.Memory({ initial: 1, maximum: 2 }) } });
    const huge = await parse('(module (memory 64))');
    assert.throws(() => capCoreModule(huge, caps(16)), /a memory starts at 64 pages \(max_memory_mb\), over this plugin's cap of 16/);
  });

  it('caps defined and imported tables', async () => {
    const grower = await parse(`(module (import "env" "t" (table 1 funcref)) (table $t 1 funcref)
      (func (export "grow") (param i32) (result i32) (table.grow $t (ref.null func) (local.get 0))))`);
    const capped = capCoreModule(grower, caps(1, 100));
    const imported = new (globalThis as unknown as { WebAssembly: { Table: new (d: { element: string; initial: number; maximum?: number }) => object } }).WebAssembly.Table({ element: 'anyfunc', initial: 1 });
    assert.throws(() => new Wasm.Instance(new Wasm.Module(capped), { env: { t: imported } }), /table/i, 'an unbounded imported table is not accepted for a capped import');
    const bounded = new (globalThis as unknown as { WebAssembly: { Table: new (d: { element: string; initial: number; maximum?: number }) => object } }).WebAssembly.Table({ element: 'anyfunc', initial: 1, maximum: 100 });
    const grow = new Wasm.Instance(new Wasm.Module(capped), { env: { t: bounded } }).exports['grow'] as (n: number) => number;
    assert.equal(grow(99), 1);
    assert.equal(grow(1), -1);
    assert.throws(() => capCoreModule(grower, caps(1, 0)), /a table starts at 1 entries, over this plugin's cap of 0/);
  });

  it('counts what a module defines and refuses GC types', async () => {
    assert.deepEqual(shapeOfCoreModule(await parse('(module (import "e" "m" (memory 1)) (memory 1) (table 1 funcref) (table 2 funcref))')), { memories: 1, tables: 2 });
    const gc = await parse('(module (type (struct (field i32))))');
    assert.throws(() => shapeOfCoreModule(gc), /type form 0x5f .* is not accepted: only function types/);
    assert.throws(() => capCoreModule(gc, caps(1)), /only function types/);
  });
});
