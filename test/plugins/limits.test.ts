import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from '@bytecodealliance/jco-transpile/wasm-tools';
import { PluginCallError, type ModuleHandle } from '../../main/plugins/index.js';
import { capModuleMemory } from '../../main/plugins/memory-cap.js';
import { Wasm, type WasmMemory } from '../../main/plugins/wasm-api.js';
import { InvalidOutput, OutputGuard, OutputTooLarge } from '../../main/plugins/worker/output-guard.js';
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
    assert.ok(took >= 290 && took < 2000, `stopped after ${took} ms`);
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
    assert.ok(took >= 990 && took < 3000, `stopped after ${took} ms`);
    assert.equal((await handle.metadata()).name, 'fixture-loop-list-tools');
  });

  it('fails a trapping call and the next call works', async () => {
    const trap = get('trap');
    await assert.rejects(call(trap, 'trap'), (err: unknown) => isKind('trap')(err) && /unreachable/.test((err as Error).message));
    assert.deepEqual(await call(trap, 'echo', '"alive"'), { ok: true, value: { content: '"alive"', usage: undefined } });
    assert.equal(trap.stats.traps, 1);
  });

  it('refuses a 2 MiB output with output_too_large, never relaying it, and the next call works', async () => {
    const big = get('big');
    await assert.rejects(call(big, 'big'), (err: unknown) => {
      assert.ok(isKind('output_too_large')(err));
      assert.match((err as Error).message, /2097152 bytes, over the 1048576-byte cap/);
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

  it('while module A runs a 2 s call, 20 calls to module B finish with p95 under 200 ms', async () => {
    const slow = get('slow');
    const echo = get('echo');
    await call(echo, 'echo'); // warm
    let aDone = false;
    const aStarted = performance.now();
    const a = call(slow, 'slow', '2000').then((r) => {
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
    const p95 = latencies[Math.ceil(0.95 * latencies.length) - 1]!;
    assert.ok(p95 < 200, `p95 ${p95.toFixed(1)} ms`);
    assert.equal((await a).ok, true);
    assert.ok(performance.now() - aStarted >= 1990);
  });
});

describe('the output guard (unit)', () => {
  const IFACE = 'chatty:plugin/plugin@0.3.0';
  async function guarded(len: number, tag = 0, ptr = 1024): Promise<{ run: () => number; memory: WasmMemory }> {
    // A core module whose invoke-tool answers ok(ptr, len) / err(failed, ptr, len) from 17 pages.
    const lenAt = tag === 0 ? 8 : 12;
    const bytes = await parse(`(module
      (memory (export "memory") 17)
      (func (export "${IFACE}#invoke-tool") (result i32)
        (i32.store8 (i32.const 0) (i32.const ${tag}))
        (i32.store (i32.const ${lenAt - 4}) (i32.const ${ptr}))
        (i32.store (i32.const ${lenAt}) (i32.const ${len}))
        (i32.const 0)))`);
    const guard = new OutputGuard(1024 * 1024, 64 * 1024);
    const { exports } = await guard.instantiateCore(await Wasm.compile(bytes));
    return { run: exports[`${IFACE}#invoke-tool`] as () => number, memory: exports['memory'] as WasmMemory };
  }

  it('reads only the length from the return area and throws before any lift', async () => {
    const over = await guarded(2 * 1024 * 1024);
    assert.throws(() => over.run(), (err: unknown) => err instanceof OutputTooLarge && err.bytes === 2 * 1024 * 1024);
    const overErr = await guarded(1024 * 1024 + 1, 1);
    assert.throws(() => overErr.run(), OutputTooLarge);
    const exact = await guarded(1024 * 1024);
    assert.equal(exact.run(), 0);
  });

  it('refuses an answer that runs past the guest\'s memory as invalid, before any lift', async () => {
    const memoryBytes = 17 * 65536;
    const past = await guarded(1024, 0, memoryBytes - 1000);
    assert.throws(() => past.run(), (err: unknown) => err instanceof InvalidOutput && /runs past the guest's memory/.test((err as Error).message));
    const pastErr = await guarded(1024, 1, memoryBytes);
    assert.throws(() => pastErr.run(), InvalidOutput);
    const edge = await guarded(1024, 0, memoryBytes - 1024);
    assert.equal(edge.run(), 0);
  });
});

describe('memory capping (unit)', () => {
  it('lowers a defined memory\'s maximum and keeps a smaller one', async () => {
    const uncapped = await parse('(module (memory (export "memory") 1))');
    const capped = capModuleMemory(uncapped, 4);
    const { exports } = new Wasm.Instance(await Wasm.compile(capped));
    const memory = exports['memory'] as WasmMemory;
    assert.equal(memory.grow(3), 1);
    assert.throws(() => memory.grow(1), RangeError);
    const small = await parse('(module (memory (export "memory") 1 2))');
    const still = new Wasm.Instance(await Wasm.compile(capModuleMemory(small, 4))).exports['memory'] as WasmMemory;
    assert.equal(still.grow(1), 1);
    assert.throws(() => still.grow(1), RangeError);
  });

  it('caps imported memories and refuses a module that starts over the cap', async () => {
    const importer = await parse('(module (import "env" "memory" (memory 1)) (func (export "f")))');
    const capped = capModuleMemory(importer, 2);
    const tooBig = new Wasm.Memory({ initial: 1, maximum: 3 });
    assert.throws(() => new Wasm.Instance(new Wasm.Module(capped), { env: { memory: tooBig } }), /memory/i);
    new Wasm.Instance(new Wasm.Module(capped), { env: { memory: new Wasm.Memory({ initial: 1, maximum: 2 }) } });
    const huge = await parse('(module (memory 64))');
    assert.throws(() => capModuleMemory(huge, 16), /starts at 64 pages, over the cap of 16 pages/);
  });
});
