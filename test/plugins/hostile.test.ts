import assert from 'node:assert/strict';
import { symlinkSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PluginCallError, type ModuleHandle, type ToolOutcome } from '../../main/plugins/index.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

const call = (handle: ModuleHandle, name: string, argumentsJson = '"x"'): Promise<ToolOutcome> =>
  handle.invokeTool({ name, argumentsJson, callId: name });
const failsWith = (kind: string, message?: RegExp) => (err: unknown) => {
  assert.ok(err instanceof PluginCallError, String(err));
  assert.equal(err.kind, kind, err.message);
  if (message) assert.match(err.message, message);
  return true;
};
const alive = async (handle: ModuleHandle): Promise<void> => {
  assert.deepEqual(await call(handle, 'echo', '"alive"'), { ok: true, value: { content: '"alive"', usage: undefined } });
};

describe('a hostile plugin never reaches past its own call', () => {
  let fx: LoadedFixtures;
  let hostile: ModuleHandle;

  before(async () => {
    fx = await loadFixtures(
      [{ name: 'hostile', kind: 'hostile', extra: '[resources]\nmax_memory_mb = 64\n' }],
      { workerHeapMb: 32 },
    );
    assert.deepEqual(fx.report.failed, []);
    hostile = fx.registry.get('hostile')!;
  });
  after(() => fx.close());

  it('an over-cap answer is refused as the lift reads it, before its bytes are copied', async () => {
    await assert.rejects(call(hostile, 'big'), failsWith('output_too_large', /invoke-tool output is over the 1048576-byte cap/));
    await alive(hostile);
  });

  it('a length that runs past memory fails the call as invalid output: nothing is read', async () => {
    // The guest's memory is 64 KiB: content "at 16, N bytes long" cannot be viewed, let alone read.
    await assert.rejects(call(hostile, 'claim', '2097152'), failsWith('invalid_output'));
    await assert.rejects(call(hostile, 'claim', '4294967295'), failsWith('invalid_output'));
    await assert.rejects(call(hostile, 'claim', '1000000'), failsWith('invalid_output'));
    await assert.rejects(call(hostile, 'oob'), failsWith('invalid_output'));
    await alive(hostile);
  });

  it('bad discriminants fail the call as invalid output', async () => {
    await assert.rejects(call(hostile, 'bad-tag'), failsWith('invalid_output'));
    await assert.rejects(call(hostile, 'bad-kind'), failsWith('invalid_output'));
    await alive(hostile);
  });

  it('list-tools claiming 2^27 tools and metadata claiming a 2 GiB name fail without a byte lifted', async () => {
    await assert.rejects(hostile.listTools(), failsWith('invalid_output', /did not lift/));
    await assert.rejects(hostile.metadata(), failsWith('invalid_output', /did not lift/));
    await alive(hostile);
  });

  it('a host-side allocation past the worker heap ends that worker, not the process; the next call works', async () => {
    // 512 pages of zeroes are 1 Mi valid `message`s for jco to lift into JS objects in the worker:
    // far past a 32 MiB heap. Without `resourceLimits` the lift succeeds (and, bigger, would take
    // the whole process down); with them the worker alone is stopped.
    const restarts = hostile.stats.restarts;
    await assert.rejects(call(hostile, 'flood', '512'), failsWith('crashed', /ran out of its 32 MiB JS heap/));
    await alive(hostile);
    assert.equal(hostile.stats.restarts, restarts + 1);
    assert.ok(fx.logs.some((l) => l.level === 'error' && /ran out of its 32 MiB JS heap/.test(l.message)));
  });

  it('a guest logging in a loop is held to a per-call budget, and told once', async () => {
    const before = fx.logs.length;
    assert.deepEqual(await call(hostile, 'log-flood', '2000'), { ok: true, value: { content: '', usage: undefined } });
    const lines = fx.logs.slice(before);
    const guest = lines.filter((l) => l.fields?.['source'] === 'guest');
    assert.equal(guest.length, 16, `${guest.length} guest lines reached the host`);
    assert.ok(guest.reduce((n, l) => n + l.message.length, 0) <= 1024 * 1024);
    assert.ok(lines.some((l) => l.level === 'warn' && /dropped 1984 log line\(s\) over the per-call budget/.test(l.message)));
    // The budget is per call.
    const again = fx.logs.length;
    await call(hostile, 'log-flood', '3');
    assert.equal(fx.logs.slice(again).filter((l) => l.fields?.['source'] === 'guest').length, 3);
  });

  it('a line over the budget costs its lift and a count, not the escaping', async () => {
    // Each 64 KiB line of the guest's memory escapes to ~64 KiB at ~25 ms of CPU. Escaped before
    // it was found not to fit, each dropped line cost as much as a kept one: 2,000 lines ran past
    // the call's 60 s limit on a loaded machine. Now a dropped line costs what jco's lift of its
    // 64 KiB string costs (~0.5 ms). Process CPU (worker and main thread), not wall clock.
    await call(hostile, 'log-flood', '17'); // warm: the code optimized, the regular expressions compiled
    const cpu = async (lines: number): Promise<number> => {
      const start = process.cpuUsage();
      await call(hostile, 'log-flood', String(lines));
      const used = process.cpuUsage(start);
      return (used.user + used.system) / 1000;
    };
    const few = await cpu(17); // 16 kept, 1 dropped
    const many = await cpu(2000); // 16 kept, 1,984 dropped
    const perDropped = (many - few) / 1983;
    assert.ok(perDropped < 5, `a dropped line cost ${perDropped.toFixed(2)} ms of CPU (2,000 lines ${many.toFixed(0)} ms, 17 lines ${few.toFixed(0)} ms)`);
  });
});

describe('one module never reaches another\'s data', () => {
  let fx: LoadedFixtures;
  const get = (name: string): ModuleHandle => fx.registry.get(name)!;

  before(async () => {
    fx = await loadFixtures([
      { name: 'alice', kind: 'echo', extra: '[config]\ngreeting = "alice-secret"\n[files]\nroot = "data"\n', files: { 'data/mine.txt': 'alice data' } },
      { name: 'bob', kind: 'echo', extra: '[config]\nother = "bob"\n[files]\nroot = "data"\n', files: { 'data/mine.txt': 'bob data' } },
    ]);
    assert.deepEqual(fx.report.failed, []);
    symlinkSync(join(fx.root, 'alice', 'data', 'mine.txt'), join(fx.root, 'bob', 'data', 'alice.txt'));
    symlinkSync(join(fx.root, 'alice', 'data'), join(fx.root, 'bob', 'data', 'alice-dir'));
  });
  after(() => fx.close());

  it('config is the module\'s own', async () => {
    assert.deepEqual(await call(get('alice'), 'config', 'greeting'), { ok: true, value: { content: 'alice-secret', usage: undefined } });
    assert.deepEqual(await call(get('bob'), 'config', 'greeting'), { ok: false, error: { kind: 'failed', message: 'none' } });
  });

  it('files are the module\'s own: no path, absolute or through a symlink, reaches a sibling\'s root', async () => {
    assert.deepEqual(await call(get('bob'), 'read', 'mine.txt'), { ok: true, value: { content: 'bob data', usage: undefined } });
    for (const path of ['../../alice/data/mine.txt', join(fx.root, 'alice', 'data', 'mine.txt'), 'alice.txt', 'alice-dir/mine.txt']) {
      const outcome = await call(get('bob'), 'read', path);
      assert.equal(outcome.ok, false, `${path} was read`);
    }
  });
});

describe('file.read-bytes size limit through the guest', () => {
  it('refuses a file over 256 MiB (sparse, nothing is read)', async () => {
    const fx = await loadFixtures([{ name: 'big-file', kind: 'echo', extra: '[files]\nroot = "data"\n', files: { 'data/huge.bin': '' } }]);
    try {
      truncateSync(join(fx.root, 'big-file', 'data', 'huge.bin'), 256 * 1024 * 1024 + 1);
      const outcome = await call(fx.registry.get('big-file')!, 'read', 'huge.bin');
      assert.deepEqual(outcome, { ok: false, error: { kind: 'failed', message: 'file: "huge.bin": 268435457 bytes is over the 268435456-byte limit' } });
    } finally {
      await fx.close();
    }
  });
});
