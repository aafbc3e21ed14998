import type { AbortLike } from '../../jsonrpc/index.js';
import { Op, SLOTS, SlotFailure } from '../worker/call-channel.js';
import type { CallOp, GuestFailureKind, PortRequest, ToolCallRequest } from '../worker/protocol.js';
import type { GuestWorker } from './guest-worker.js';
import type { WaitingBudget } from './waiting-budget.js';

/**
 * One call to a module, from `enqueue` until it is settled.
 *
 * A class, not an object literal, as is the request it carries (`InvokeToolRequest`): V8 records
 * where each object literal is made and, once a site's objects are found alive at a young-generation
 * collection, makes that site's later objects straight in the old generation. At 32 calls in flight
 * it did so for the job and the request literals, and every call's job, request, promise and
 * closures then stayed until the next full collection (issue 21: the main thread's old generation
 * grew ~0.6 MB at each scavenge, and scavenges took 2-3 times as long). An object a class's
 * constructor makes carries no such record.
 */
export class Job {
  /** Its number on the current worker's call channel, once posted. */
  seq = 0;
  /** Its arguments' size (the JSON text's length), counted while it waits (`CallQueue`). */
  readonly bytes: number;
  counted = false;
  /** Its caller cancelled it and has been answered: whatever the worker says of it is dropped. */
  cancelled = false;
  /** The caller's signal and the listener on it, taken off when the call is settled. */
  private signal: AbortLike | undefined;
  private onAbort: (() => void) | undefined;

  constructor(
    readonly op: CallOp,
    readonly request: ToolCallRequest | undefined,
    readonly timeoutMs: number,
    private readonly fulfil: (value: unknown) => void,
    private readonly fail: (err: Error) => void,
  ) {
    this.bytes = request?.argumentsJson.length ?? 0;
  }

  /** `onAbort` runs if `signal` aborts before the call is settled. */
  listen(signal: AbortLike, onAbort: () => void): void {
    this.signal = signal;
    this.onAbort = onAbort;
    signal.addEventListener('abort', onAbort, ONCE);
  }

  resolve(value: unknown): void {
    this.unlisten();
    this.fulfil(value);
  }

  reject(err: Error): void {
    this.unlisten();
    this.fail(err);
  }

  private unlisten(): void {
    if (this.onAbort === undefined) return;
    this.signal!.removeEventListener('abort', this.onAbort);
    this.onAbort = undefined;
  }
}

/** The listener options of a call's abort listener (one object, not one a call). */
const ONCE = { once: true } as const;

/** An `invoke-tool` request as the worker gets it; a class for the reason `Job` gives. */
export class InvokeToolRequest implements ToolCallRequest {
  constructor(
    readonly name: string,
    readonly argumentsJson: string,
    readonly callId: string,
    readonly caller: string | undefined,
  ) {}
}

/** How settling reports a call that did not end with a value. */
export interface Settler {
  /** The worker reported a failure outside the guest's result (trap, output too large…). */
  fail(job: Job, kind: GuestFailureKind, message: string): void;
  /** The answer is neither in its slot nor on the port. */
  lost(job: Job): void;
}

const OPS: Record<CallOp, Op> = { metadata: Op.Metadata, 'list-tools': Op.ListTools, 'invoke-tool': Op.InvokeTool };

/**
 * A module's lock: its calls in order, those waiting for the worker and those posted to it. Up to
 * the channel's `SLOTS` calls are posted ahead; the worker runs them one at a time, so the first
 * posted is the one running. A call posted to a worker that is gone but never started there goes
 * back to the front. The arguments of the calls waiting are counted as they come and go (`waitingBytes`),
 * and in the gateway's `budget` too: every change to `waiting` goes through this class.
 */
export class CallQueue {
  /** Calls not yet posted to the worker, in order (read it; change it only through this class). */
  readonly waiting: Job[] = [];
  /** Calls posted to the current worker, in order: the first is running (or about to). */
  readonly inflight: Job[] = [];
  /** The arguments (the JSON text's length) the calls in `waiting` hold. */
  waitingBytes = 0;

  constructor(private readonly budget: WaitingBudget) {}

  /** Queues a call behind those waiting. */
  add(job: Job): void {
    this.waiting.push(job);
    this.hold(job.bytes);
  }

  /** Calls waiting for the lock: all but the first in line (running, or waiting for the engine to start). */
  get queued(): number {
    return Math.max(0, this.waiting.length + this.inflight.length - 1);
  }

  /** Whether the channel has room for another posted call. */
  get full(): boolean {
    return this.inflight.length >= SLOTS;
  }

  /** Posts waiting calls to the worker, up to the channel's depth; `posted` sees each as it goes. */
  post(live: GuestWorker, posted: (job: Job) => void): void {
    while (this.waiting.length > 0 && this.inflight.length < SLOTS) {
      const job = this.waiting.shift()!;
      this.hold(-job.bytes);
      const seq = ++live.posted;
      job.seq = seq;
      if (!live.channel.writeRequest(seq, OPS[job.op], job.request)) {
        live.callPort.postMessage({ seq, request: job.request! } satisfies PortRequest);
      }
      this.inflight.push(job);
      posted(job);
    }
  }

  /** Settles, in order, every call the worker has answered. */
  settleDone(live: GuestWorker, settler: Settler): void {
    const done = live.answered();
    if (done <= live.settled) return;
    live.drainPort(); // the calls' log lines first, and any answer that did not fit its slot
    while (live.settled < done && this.inflight.length > 0) {
      const seq = ++live.settled;
      const job = this.inflight.shift()!;
      settle(live, job, seq, settler);
    }
  }

  /** Calls posted to a worker that is gone but never started there go back to the front (cancelled ones are dropped). */
  requeueInflight(): void {
    const rest = this.inflight.splice(0).filter((job) => !job.cancelled);
    for (const job of rest) {
      job.seq = 0;
      this.hold(job.bytes);
    }
    this.waiting.unshift(...rest);
  }

  /** Takes a call that is not posted yet out of the queue; false if it was posted (or settled). */
  withdraw(job: Job): boolean {
    const at = this.waiting.indexOf(job);
    if (at < 0) return false;
    this.waiting.splice(at, 1);
    this.hold(-job.bytes);
    return true;
  }

  /** Takes every call not posted yet out of the queue (a start that failed fails them all). */
  takeWaiting(): Job[] {
    this.hold(-this.waitingBytes);
    return this.waiting.splice(0);
  }

  /** Empties the queue (posted calls first), for `close`. */
  takeAll(): Job[] {
    return [...this.inflight.splice(0), ...this.takeWaiting()];
  }

  /** `bytes` more (or, negative, fewer) held by waiting calls, here and in the gateway's total. */
  private hold(bytes: number): void {
    this.waitingBytes += bytes;
    this.budget.held += bytes;
  }
}

function settle(live: GuestWorker, job: Job, seq: number, settler: Settler): void {
  if (job.cancelled) {
    live.portAnswers.delete(seq);
    return;
  }
  const answer = live.channel.readAnswer(seq);
  if (answer === undefined) {
    const msg = live.portAnswers.get(seq);
    live.portAnswers.delete(seq);
    if (msg?.type === 'done') return job.resolve(msg.value);
    if (msg?.type === 'failed') return settler.fail(job, msg.kind, msg.message);
    return settler.lost(job);
  }
  if (answer instanceof SlotFailure) return settler.fail(job, answer.kind as GuestFailureKind, answer.message);
  job.resolve(answer);
}
