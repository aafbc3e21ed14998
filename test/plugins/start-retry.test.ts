import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ModuleHandle } from '../../main/plugins/handle/index.js';
import { PluginCallError } from '../../main/plugins/index.js';
import { START_RETRY_FIRST_MS } from '../../main/plugins/limits.js';
import { httpAnswerOf, pluginFailure } from '../../main/gateway/mcp/index.js';
import { spinningStart, type SpinningStart } from '../helpers/spinning-start.js';

/**
 * A component whose top-level code spins (the `start-spins` fixture: its core module's start
 * function never returns) fails its start by timeout. The handle then refuses calls for a while
 * that doubles at each such failure, instead of starting again (and holding a start turn for the
 * whole limit) at every call. The handles here run with a 1000 ms instantiation limit, but the second test's, where one start must succeed, has 8 s.
 */
const INSTANTIATE_MS = 1000;
/**
 * The limit where a start must also succeed (the echo component's, on a machine at load 20 and
 * more): a hang guard for that start, while the spinning starts still run out of it. The wait
 * after a timeout is START_RETRY_FIRST_MS whatever the limit, which is what is checked there.
 */
const SUCCEEDING_START_MS = 8000;

describe('after a start that ran out of time, a module waits before it starts again', () => {
  let fx: SpinningStart;
  before(async () => {
    fx = await spinningStart('chatty-start-retry-');
  });
  after(() => fx.close());

  const call = (handle: ModuleHandle, text: string) => handle.invokeTool({ name: 'echo', argumentsJson: JSON.stringify(text), callId: text });
  const crashed = (pattern: RegExp) => (err: unknown) => err instanceof PluginCallError && err.kind === 'crashed' && pattern.test(err.message);

  it('refuses calls at once for 1 s, naming the wait, without starting; then tries once more and waits 2 s', async () => {
    let spins = true;
    let compiles = 0;
    const handle = fx.handle({
      instantiateTimeoutMs: INSTANTIATE_MS,
      compile: async () => (compiles++, spins ? fx.spinning : fx.echoInit.compile()),
    });

    // The first start runs out of time: the calls waiting for it fail, naming the wait.
    const first = await Promise.allSettled([call(handle, 'a'), call(handle, 'b')]);
    for (const outcome of first) {
      assert.equal(outcome.status, 'rejected');
      assert.ok(crashed(new RegExp(`could not start: instantiating took longer than ${INSTANTIATE_MS} ms; it is tried again in 1\\.0 s$`))((outcome as PromiseRejectedResult).reason));
    }
    assert.equal(compiles, 1);

    // During the wait: refused at once, no start tried.
    const refusedAt = performance.now();
    await assert.rejects(call(handle, 'c'), crashed(/could not start: instantiating took longer than 1000 ms at its last start; it is tried again in (0\.\d|1\.0) s$/));
    assert.equal(compiles, 1, 'refused without a start'); // not timed: a loaded machine may stall a second anywhere
    assert.equal(handle.engineState, 'stopped');

    // After the wait the next call starts again; it runs out of time too, and the wait doubles.
    while (performance.now() - refusedAt < START_RETRY_FIRST_MS) await new Promise((resolve) => setImmediate(resolve));
    let retried: unknown;
    for (;;) {
      try {
        await call(handle, 'd');
      } catch (err) {
        if (/tried again in 0\.0 s$/.test((err as Error).message)) continue; // the last moments of the first wait
        retried = err;
        break;
      }
    }
    assert.ok(crashed(/could not start: instantiating took longer than 1000 ms; it is tried again in 2\.0 s$/)(retried), String(retried));
    assert.equal(compiles, 2);
    await assert.rejects(call(handle, 'e'), crashed(/tried again in (1\.\d|2\.0) s$/));
    assert.equal(compiles, 2);
  });

  it('a start that succeeds clears the wait: a later timeout waits 1 s again', async () => {
    let spins = true;
    const handle = fx.handle({
      instantiateTimeoutMs: SUCCEEDING_START_MS,
      engineIdleMs: 0,
      compile: async () => (spins ? fx.spinning : fx.echoInit.compile()),
    });
    await assert.rejects(call(handle, 'a'), crashed(/tried again in 1\.0 s$/));
    spins = false;
    const since = performance.now();
    while (performance.now() - since < START_RETRY_FIRST_MS) await new Promise((resolve) => setImmediate(resolve));
    let answer: unknown;
    for (;;) {
      try {
        answer = await call(handle, 'b');
        break;
      } catch (err) {
        if (!/tried again in 0\.0 s$/.test((err as Error).message)) throw err;
      }
    }
    assert.deepEqual(answer, { ok: true, value: { content: '"b"', usage: undefined } });
    // The engine ends (a crash stands for any end); its next start times out and waits 1 s, not 2.
    spins = true;
    await (handle as unknown as { live: { kill(): Promise<void> } }).live.kill();
    await assert.rejects(call(handle, 'c'), crashed(/tried again in 1\.0 s$/));
  });
  it('over MCP the refusals are a 503 whose Retry-After is the wait left (rounded up), not a 500', async () => {
    const handle = fx.handle({ instantiateTimeoutMs: INSTANTIATE_MS, compile: async () => fx.spinning });
    const http = (err: unknown) => {
      const rpc = pluginFailure(err);
      const object = rpc.toErrorObject();
      return { ...httpAnswerOf(object), message: object.message };
    };
    const waited = await call(handle, 'a').then(() => assert.fail('the start spins'), http);
    assert.equal(waited.status, 503);
    assert.equal(waited.retryAfterSeconds, 1);
    assert.match(waited.message, /could not start: instantiating took longer than 1000 ms; it is tried again in 1\.0 s$/);
    const refused = await call(handle, 'b').then(() => assert.fail('refused during the wait'), http);
    assert.equal(refused.status, 503);
    assert.equal(refused.retryAfterSeconds, 1);
    assert.match(refused.message, /tried again in (0\.\d|1\.0) s$/);
  });
});
