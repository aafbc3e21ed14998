import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CallAbort, untilAborted } from '../../main/jsonrpc/index.js';

/** A promise settled from outside. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (err: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** A CallAbort that counts the listeners it holds. */
class CountedAbort extends CallAbort {
  listening = 0;
  override addEventListener(type: 'abort', listener: () => void): void {
    if (!this.aborted) this.listening++;
    super.addEventListener(type, listener);
  }
  override removeEventListener(type: 'abort', listener: () => void): void {
    this.listening--;
    super.removeEventListener(type, listener);
  }
}

describe('untilAborted', () => {
  test("the work's value, and its listener is gone after", async () => {
    const signal = new CountedAbort();
    assert.equal(await untilAborted(Promise.resolve(7), signal), 7);
    assert.equal(signal.listening, 0);
  });

  test("the work's error as it is, and its listener is gone after", async () => {
    const signal = new CountedAbort();
    const boom = new Error('boom');
    await assert.rejects(untilAborted(Promise.reject(boom), signal), (err) => err === boom);
    assert.equal(signal.listening, 0);
  });

  test("an abort while the work runs rejects at once with the signal's reason; the work's late error is dropped", async () => {
    const work = deferred<number>();
    const controller = new AbortController();
    const raced = untilAborted(work.promise, controller.signal);
    const reason = new Error('given up');
    controller.abort(reason);
    await assert.rejects(raced, (err) => err === reason);
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown): void => void unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    work.reject(new Error('late'));
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', onUnhandled);
    assert.deepEqual(unhandled, []);
  });

  test("a signal aborted before: rejected with its reason as it is (here not an Error), the work's error dropped", async () => {
    const controller = new AbortController();
    controller.abort('a string reason');
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown): void => void unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    await assert.rejects(untilAborted(Promise.reject(new Error('never seen')), controller.signal), (err) => err === 'a string reason');
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', onUnhandled);
    assert.deepEqual(unhandled, []);
  });

  test("an AbortSignal's default reason is its AbortError", async () => {
    const controller = new AbortController();
    const raced = untilAborted(new Promise<never>(() => {}), controller.signal);
    controller.abort();
    await assert.rejects(raced, { name: 'AbortError' });
  });
});
