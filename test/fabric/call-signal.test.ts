/**
 * A worker's call carries a cheap abort (`CallSignal.abort`) and an `AbortSignal` made only when
 * first read: both abort together, with the same reason, whichever is read first and when.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { CallSignal, toAbortSignal } from '../../main/fabric/admission/call-signal.js';
import { CallAbort } from '../../main/jsonrpc/index.js';

it('a signal read before the cancel aborts with it, after the abort\'s listeners, with the same reason', () => {
  const call = new CallSignal();
  const seen: string[] = [];
  call.abort.addEventListener('abort', () => seen.push('abort'));
  const { signal } = call;
  signal.addEventListener('abort', () => seen.push(`signal: ${(signal.reason as Error).message}`));
  assert.equal(signal.aborted, false);
  const reason = new Error('cancelled by the worker');
  call.cancel(reason);
  call.cancel(new Error('a second cancel changes nothing'));
  assert.deepEqual(seen, ['abort', 'signal: cancelled by the worker']);
  assert.equal(signal.reason, reason);
  assert.equal(call.signal, signal, 'one signal per call');
});

it('a signal first read after the cancel is already aborted, with its reason', () => {
  const call = new CallSignal();
  const reason = new Error('disconnected: gone');
  call.cancel(reason);
  assert.equal(call.abort.aborted, true);
  assert.equal(call.signal.aborted, true);
  assert.equal(call.signal.reason, reason);
});

it('toAbortSignal gives an AbortSignal back as it is and bridges a CallAbort', () => {
  const real = new AbortController().signal;
  assert.equal(toAbortSignal(real), real);
  const abort = new CallAbort();
  const bridged = toAbortSignal(abort);
  assert.ok(bridged instanceof AbortSignal);
  abort.abort('stop');
  assert.equal(bridged.aborted, true);
  assert.equal(bridged.reason, 'stop');
});
