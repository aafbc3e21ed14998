import { FrameTooLargeError, requestLine } from '../codec/frame-too-large.js';
import { MAX_FRAME_BYTES } from '../limits/constants.js';
import type { TaskRunParams } from '../wire/broker-to-worker.js';
import { wireError } from '../wire/wire-error.js';
import { CallError } from './call-error.js';

/** The longest line a worker served with these options reads (`ServeOptions.workerMaxFrameBytes`). */
export function workerFrameCap(options: { workerMaxFrameBytes?: number | undefined } | undefined): number {
  return options?.workerMaxFrameBytes ?? MAX_FRAME_BYTES;
}

/** What a broker's request too large for `receiver`'s frame cap fails with: `failed`, naming both sizes. */
export function tooLargeFor(receiver: string, err: FrameTooLargeError): CallError {
  const reason = `the ${err.method} is ${err.bytes} bytes, over ${receiver}'s frame cap of ${err.maxBytes}`;
  return new CallError(wireError({ kind: 'failed', reason }));
}

/** The id of a connection's first request: a fresh worker's task.run (the shortest id, so never a refusal the codec would not make). */
const FIRST_REQUEST_ID = 1;

/**
 * Throws the `CallError` a connection's `sendTask` would (`tooLargeFor`) when `params` makes a
 * task.run over `maxBytes`, for a worker not started yet: a virtual agent's call is refused before
 * it costs a process. The line is encoded and measured as the codec does (one encoding more, on a
 * call about to spawn a process); the codec still measures the line it sends.
 */
export function checkTaskRunSize(params: TaskRunParams, receiver: string, maxBytes: number): void {
  try {
    requestLine(FIRST_REQUEST_ID, 'task.run', params, maxBytes);
  } catch (err) {
    throw err instanceof FrameTooLargeError ? tooLargeFor(receiver, err) : err;
  }
}
