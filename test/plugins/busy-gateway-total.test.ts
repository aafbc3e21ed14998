import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PluginCallError, type ModuleHandle } from '../../main/plugins/index.js';
import { SLOTS } from '../../main/plugins/worker/call-channel.js';
import { running } from '../helpers/running-call.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

/**
 * Each module caps its own waiting arguments (`MAX_WAITING_ARGUMENT_BYTES`), but N slow modules
 * would hold N times that in the main process: the modules of one registry share one total
 * (`maxTotalWaitingArgumentBytes`, here 1 MiB), and a call that would take it over is refused
 * `busy` though its own module holds nothing.
 */
const TOTAL = 1024 * 1024;
const SIZE = 600 * 1024;
const big = (tag: string) => JSON.stringify(tag.padEnd(SIZE - 2, '.'));

/** The call's outcome: 'answered' or its error kind; 'pending' if it is not settled within a turn of the event loop. */
function outcome(call: Promise<unknown>): Promise<string> {
  const settled = call.then(
    () => 'answered',
    (err: unknown) => (err instanceof PluginCallError ? `${err.kind}: ${err.message}` : String(err)),
  );
  return Promise.race([settled, new Promise<string>((resolve) => setImmediate(() => resolve('pending')))]);
}

describe("a registry's modules share one cap on their waiting calls' arguments", () => {
  let fx: LoadedFixtures;
  before(async () => {
    fx = await loadFixtures([{ name: 'first', kind: 'slow' }, { name: 'second', kind: 'slow' }, { name: 'third', kind: 'slow' }], { maxTotalWaitingArgumentBytes: TOTAL });
    assert.deepEqual(fx.report.failed, []);
  });
  after(() => fx.close());

  /** `handle` runs a slow call with its channel's other slots posted, and one big call waiting behind (all settled by the returned promise). */
  async function crowd(handle: ModuleHandle, tag: string, signal?: AbortSignal): Promise<{ slow: Promise<unknown>; waiting: ReturnType<ModuleHandle['invokeTool']> }> {
    const slow = handle.invokeTool({ name: 'slow', argumentsJson: '300', callId: `${tag}-slow` });
    await running(handle, `${tag}-slow`, slow);
    const posted = Array.from({ length: SLOTS - 1 }, (_, i) => handle.invokeTool({ name: 'echo', argumentsJson: '"small"', callId: `${tag}-posted-${i}` }));
    const waiting = handle.invokeTool({ name: 'echo', argumentsJson: big(tag), callId: `${tag}-big` }, { signal });
    return { slow: Promise.all([slow, ...posted]), waiting };
  }

  it("a call that would take the total over is refused busy, naming the gateway's total; once the first module's calls finish a call fits again", async () => {
    const first = fx.registry.get('first')!;
    const second = fx.registry.get('second')!;
    const { slow, waiting } = await crowd(first, 'finish');
    const refused = await outcome(second.invokeTool({ name: 'echo', argumentsJson: big('second'), callId: 'second-refused' }));
    assert.match(refused, /^busy: busy: module second: the gateway's waiting calls hold 0\.6 MiB of arguments, its total cap 1\.0 MiB; try again later$/);
    assert.equal(second.stats.busy, 1);
    assert.equal(second.queued, 0, 'its own module held nothing');
    await slow;
    assert.equal((await waiting).ok, true, 'the first module\'s big call ran');
    assert.deepEqual(await second.invokeTool({ name: 'echo', argumentsJson: big('second'), callId: 'second-fits' }), { ok: true, value: { content: big('second'), usage: undefined } });
  });

  it('a waiting call cancelled gives its bytes back to the total at once', async () => {
    const first = fx.registry.get('first')!;
    const second = fx.registry.get('second')!;
    const abort = new AbortController();
    const { slow, waiting } = await crowd(first, 'cancel', abort.signal);
    assert.match(await outcome(second.invokeTool({ name: 'echo', argumentsJson: big('second'), callId: 'second-refused-2' })), /^busy: /);
    abort.abort();
    await assert.rejects(waiting, (err: unknown) => err instanceof PluginCallError && err.kind === 'cancelled');
    const fits = second.invokeTool({ name: 'echo', argumentsJson: big('second'), callId: 'second-fits-2' });
    assert.equal((await fits).ok, true);
    await slow;
  });

  it('a module unloaded gives its waiting calls\' bytes back to the total', async () => {
    const third = fx.registry.get('third')!;
    const second = fx.registry.get('second')!;
    const { slow, waiting } = await crowd(third, 'unload');
    assert.match(await outcome(second.invokeTool({ name: 'echo', argumentsJson: big('second'), callId: 'second-refused-3' })), /^busy: /);
    const unloaded = assert.rejects(waiting, (err: unknown) => err instanceof PluginCallError && err.kind === 'unloaded');
    const ended = assert.rejects(slow, (err: unknown) => err instanceof PluginCallError && err.kind === 'unloaded');
    await fx.registry.unload('third');
    await unloaded;
    await ended;
    assert.equal((await second.invokeTool({ name: 'echo', argumentsJson: big('second'), callId: 'second-fits-3' })).ok, true);
  });

  it("a module reloaded: its retired instance's waiting calls hold their bytes until they run, and its new instance shares the same total", async () => {
    const old = fx.registry.get('first')!;
    const second = fx.registry.get('second')!;
    // The running call lasts until it is cancelled (a reload lists the tools on a fresh engine, which may take as long as any short call).
    const stop = new AbortController();
    const slow = old.invokeTool({ name: 'slow', argumentsJson: '30000', callId: 'reload-slow' }, { signal: stop.signal });
    const stopped = assert.rejects(slow, (err: unknown) => err instanceof PluginCallError && err.kind === 'cancelled');
    await running(old, 'reload-slow', slow);
    const posted = Array.from({ length: SLOTS - 1 }, (_, i) => old.invokeTool({ name: 'echo', argumentsJson: '"small"', callId: `reload-posted-${i}` }));
    const waiting = old.invokeTool({ name: 'echo', argumentsJson: big('reload'), callId: 'reload-big' });
    await fx.registry.reload('first');
    const fresh = fx.registry.get('first')!;
    assert.notEqual(fresh, old);
    assert.match(await outcome(fresh.invokeTool({ name: 'echo', argumentsJson: big('fresh'), callId: 'fresh-refused' })), /^busy: busy: module first: the gateway's waiting calls hold/);
    stop.abort();
    await stopped;
    await Promise.all(posted);
    assert.equal((await waiting).ok, true, 'the retired instance ran its waiting call');
    assert.equal((await second.invokeTool({ name: 'echo', argumentsJson: big('second'), callId: 'second-fits-4' })).ok, true);
  });

  it('a lone call larger than the total is not refused (nothing else holds any)', async () => {
    const second = fx.registry.get('second')!;
    const huge = JSON.stringify('x'.repeat(TOTAL + 1));
    await assert.rejects(second.invokeTool({ name: 'echo', argumentsJson: huge, callId: 'huge' }), (err: unknown) => err instanceof PluginCallError && err.kind === 'output_too_large');
  });
});

describe("the gateway's total counts the calls the credit meter is still being asked about", () => {
  let fx: LoadedFixtures;
  const asked: string[] = [];
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  before(async () => {
    fx = await loadFixtures([{ name: 'held', kind: 'echo' }, { name: 'other', kind: 'echo' }], {
      maxTotalWaitingArgumentBytes: TOTAL,
      meter: {
        async admit(module, call) {
          asked.push(call.callId);
          if (module === 'held') await gate;
          return call.callId !== 'refused-by-meter';
        },
      },
    });
    assert.deepEqual(fx.report.failed, []);
  });
  after(() => fx.close());

  it('a call held at the meter counts; past the total a call is refused busy unseen by the meter; the meter answering (yes or no) frees its bytes', async () => {
    const held = fx.registry.get('held')!;
    const other = fx.registry.get('other')!;
    const atMeter = held.invokeTool({ name: 'echo', argumentsJson: big('held'), callId: 'at-meter' });
    assert.match(await outcome(other.invokeTool({ name: 'echo', argumentsJson: big('other'), callId: 'over-total' })), /^busy: busy: module other: the gateway's waiting calls hold/);
    assert.deepEqual(asked, ['at-meter'], 'the meter never saw the call refused busy');
    open();
    assert.equal((await atMeter).ok, true);
    const refusing = held.invokeTool({ name: 'echo', argumentsJson: big('held'), callId: 'refused-by-meter' });
    await assert.rejects(refusing, (err: unknown) => err instanceof PluginCallError && err.kind === 'credit_refused');
    assert.equal((await other.invokeTool({ name: 'echo', argumentsJson: big('other'), callId: 'fits' })).ok, true);
  });
});
