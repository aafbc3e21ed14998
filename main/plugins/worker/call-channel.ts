/**
 * The call channel between a `ModuleHandle` (main thread) and its worker: a SharedArrayBuffer with
 * a few counters and a ring of call slots. It replaces a `postMessage` each way per call, because
 * what a message costs is mostly waking the other thread's event loop and dispatching a message
 * event, not the copy:
 *
 * - The main thread writes call `seq` into slot `(seq - 1) % SLOTS`, then bumps `REQ` and notifies.
 * - The worker sleeps in `Atomics.wait` on `REQ` while there is nothing to run (its event loop
 *   never spins for a call), takes calls strictly in order, stamps `RUNNING` and the start time,
 *   writes the answer into the same slot, bumps `DONE` and notifies.
 * - The main thread learns of `DONE` through `Atomics.waitAsync` (one wait covers every call that
 *   finished meanwhile) and may post up to `SLOTS` calls ahead: the worker goes from one call to
 *   the next without waiting for the main thread. They still run one at a time, in order.
 *
 * Strings travel as UTF-8 in the slot. What does not fit (a large argument or answer) and the
 * rare calls with structured answers (`metadata`, `list-tools`) go over a `MessagePort` instead,
 * with the slot saying so; the port is FIFO, so order holds.
 */
import type { TokenUsage, ToolCallRequest, ToolErrorKind, ToolOutcome } from './protocol.js';

/** Int32 indices of the header. */
export const REQ = 0; // calls posted by the main thread (a count: the last posted seq)
export const DONE = 1; // calls the worker has answered
export const RUNNING = 2; // the seq the worker is running or last ran
export const STOP = 3; // non-zero: the worker returns from its loop
export const SENT = 4; // messages the worker has put on its port (so the main thread knows when to read it)
/**
 * Times the worker handed the guest its module's name or asked the main thread to (a refusal that
 * names it, a provider's call, which is told the module): a list of tools made without it is the
 * same for any module of these bytes (`ModuleHandle`'s tool record).
 */
export const NAME_TOLD = 5;
/** Float64 index of the time (`monotonicMs()`, worker's clock) the `RUNNING` call started. */
export const STARTED_F64 = 4; // bytes 32..39 (after the int32 counters)

const HEADER_BYTES = 64;
/** Calls the main thread may post ahead of the worker. */
export const SLOTS = 8;
const SLOT_BYTES = 32 * 1024;
const SLOT_HEAD_BYTES = 32; // 8 int32s: the code, four string lengths, two extras, the cancel mark
/** The slot head's int that holds the seq of a call cancelled before it started. */
const CANCEL_INT = 7;
const SLOT_DATA_BYTES = SLOT_BYTES - SLOT_HEAD_BYTES;
export const CHANNEL_BYTES = HEADER_BYTES + SLOTS * SLOT_BYTES;

/** Request codes (slot int 0). */
export const Op = { Metadata: 1, ListTools: 2, InvokeTool: 3 } as const;
export type Op = (typeof Op)[keyof typeof Op];
/** Set on the op when the request itself is on the port. */
export const ON_PORT = 0x100;

/**
 * Answer codes (slot int 0): `Ok` has the content, `OkUsage` also the usage (ints 5 and 6),
 * `ToolError` the kind and message, `Failed` the guest failure kind and message, `OnPort` means
 * the answer is a message on the port.
 */
const Answer = { Ok: 1, OkUsage: 2, ToolError: 3, Failed: 4, OnPort: 5 } as const;

/** A failure outside the guest's own result (a trap, an output too large…), as its slot holds it. */
export class SlotFailure {
  constructor(
    readonly kind: string,
    readonly message: string,
  ) {}
}

/**
 * `{ ok: true, value: { content, usage } }`, built from empty objects rather than written as a
 * literal: V8 records where each object literal with properties is made and, once a site's
 * objects are found alive at a young-generation collection, makes its later objects straight in
 * the old generation. It did so for this literal at 32 calls in flight, so every answer stayed
 * until the next full collection (issue 21; `Job` in plugins/handle has the same story). An empty
 * `{}` carries no such record.
 */
function okOutcome(content: string, usage: TokenUsage | undefined): ToolOutcome {
  const value = {} as { content: string; usage: TokenUsage | undefined };
  value.content = content;
  value.usage = usage;
  const outcome = {} as { ok: true; value: typeof value };
  outcome.ok = true;
  outcome.value = value;
  return outcome;
}

/** A monotonic clock in milliseconds, the same on every thread of the process. */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** One side's view of the channel. */
export class CallChannel {
  readonly ints: Int32Array;
  readonly f64: Float64Array;
  readonly bytes: Buffer;

  constructor(readonly sab: SharedArrayBuffer) {
    this.ints = new Int32Array(sab);
    this.f64 = new Float64Array(sab, 0, HEADER_BYTES / 8);
    this.bytes = Buffer.from(sab);
  }

  static create(): CallChannel {
    return new CallChannel(new SharedArrayBuffer(CHANNEL_BYTES));
  }

  private base(seq: number): number {
    return HEADER_BYTES + ((seq - 1) % SLOTS) * SLOT_BYTES;
  }

  /** Writes `strings` after the slot head; false (nothing written) when they do not fit. */
  private put(seq: number, code: number, strings: readonly (string | undefined)[], extra0 = 0, extra1 = 0): boolean {
    const base = this.base(seq);
    let upper = 0;
    for (const s of strings) if (s !== undefined) upper += s.length;
    if (upper * 3 > SLOT_DATA_BYTES) {
      let exact = 0;
      for (const s of strings) if (s !== undefined) exact += Buffer.byteLength(s, 'utf8');
      if (exact > SLOT_DATA_BYTES) return false;
    }
    const head = base >> 2;
    let at = base + SLOT_HEAD_BYTES;
    for (let i = 0; i < strings.length; i++) {
      const s = strings[i];
      if (s === undefined) {
        this.ints[head + 1 + i] = -1;
        continue;
      }
      const n = s.length === 0 ? 0 : this.bytes.write(s, at, 'utf8');
      this.ints[head + 1 + i] = n;
      at += n;
    }
    this.ints[head + 5] = extra0;
    this.ints[head + 6] = extra1;
    this.ints[head] = code;
    return true;
  }

  /** String `index` of the slot at `base` (its length in int `1 + index`, -1 for absent). */
  private text(base: number, index: number): string | undefined {
    const head = base >> 2;
    let at = base + SLOT_HEAD_BYTES;
    for (let i = 0; i < index; i++) at += Math.max(0, this.ints[head + 1 + i]!);
    const n = this.ints[head + 1 + index]!;
    if (n < 0) return undefined;
    return n === 0 ? '' : this.bytes.toString('utf8', at, at + n);
  }

  // --- main thread -------------------------------------------------------------------------------

  /** Writes call `seq`; false when the request must go over the port (the slot then says so). */
  writeRequest(seq: number, op: Op, request: ToolCallRequest | undefined): boolean {
    if (op !== Op.InvokeTool || !request) {
      this.ints[this.base(seq) >> 2] = op;
      return true;
    }
    if (this.put(seq, op, [request.name, request.argumentsJson, request.callId, request.caller])) return true;
    this.ints[this.base(seq) >> 2] = op | ON_PORT;
    return false;
  }

  /**
   * The answer to call `seq`: the guest's outcome, a `SlotFailure`, or `undefined` when it is on
   * the port. Read straight from the slot: on the `tools/call` path it is made at every answer.
   */
  readAnswer(seq: number): ToolOutcome | SlotFailure | undefined {
    const base = this.base(seq);
    const head = base >> 2;
    switch (this.ints[head]) {
      case Answer.Ok:
        return okOutcome(this.text(base, 0)!, undefined);
      case Answer.OkUsage:
        return okOutcome(this.text(base, 0)!, { inputTokens: this.ints[head + 5]! >>> 0, outputTokens: this.ints[head + 6]! >>> 0 });
      case Answer.ToolError:
        return { ok: false, error: { kind: this.text(base, 0) as ToolErrorKind, message: this.text(base, 1)! } };
      case Answer.Failed:
        return new SlotFailure(this.text(base, 0)!, this.text(base, 1)!);
      default:
        return undefined;
    }
  }

  // --- worker ------------------------------------------------------------------------------------

  /** Call `seq`'s op and, for `invoke-tool` in the slot, its request. */
  readRequest(seq: number): { op: Op; onPort: boolean; request: ToolCallRequest | undefined } {
    const base = this.base(seq);
    const code = this.ints[base >> 2]!;
    const op = (code & 0xff) as Op;
    if (op !== Op.InvokeTool || code & ON_PORT) return { op, onPort: (code & ON_PORT) !== 0, request: undefined };
    const request: ToolCallRequest = { name: this.text(base, 0)!, argumentsJson: this.text(base, 1)!, callId: this.text(base, 2)! };
    const caller = this.text(base, 3);
    if (caller !== undefined) request.caller = caller;
    return { op, onPort: false, request };
  }

  /** Writes an answer into the slot; false when it does not fit (send it on the port). */
  writeOutcome(seq: number, outcome: ToolOutcome): boolean {
    if (outcome.ok) {
      const usage = outcome.value.usage;
      if (usage === undefined || usage === null) return this.put(seq, Answer.Ok, [outcome.value.content]);
      if (typeof usage.inputTokens !== 'number' || typeof usage.outputTokens !== 'number') return false;
      return this.put(seq, Answer.OkUsage, [outcome.value.content], usage.inputTokens, usage.outputTokens);
    }
    return this.put(seq, Answer.ToolError, [outcome.error.kind, outcome.error.message]);
  }

  writeFailure(seq: number, kind: string, message: string): boolean {
    return this.put(seq, Answer.Failed, [kind, message]);
  }

  markOnPort(seq: number): void {
    this.ints[this.base(seq) >> 2] = Answer.OnPort;
  }

  // --- cancellation ------------------------------------------------------------------------------

  /**
   * Main thread: call `seq` was cancelled. A worker that has not started it yet skips it (it
   * stamps `RUNNING` before it looks, so either it sees this mark or the main thread sees it
   * running and stops the worker). The mark is the seq itself, so a slot's earlier use never counts.
   */
  markCancelled(seq: number): void {
    Atomics.store(this.ints, (this.base(seq) >> 2) + CANCEL_INT, seq);
  }

  /** Worker: whether call `seq` was cancelled before it started. */
  isCancelled(seq: number): boolean {
    return Atomics.load(this.ints, (this.base(seq) >> 2) + CANCEL_INT) === seq;
  }

  /** Main thread: whether the worker has started call `seq` and not answered it yet. */
  isRunning(seq: number): boolean {
    return Atomics.load(this.ints, RUNNING) === seq && Atomics.load(this.ints, DONE) < seq;
  }
}
