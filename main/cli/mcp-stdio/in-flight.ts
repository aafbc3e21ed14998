import { messageFrame, type ErrorObject } from '../../jsonrpc/index.js';
import { MAX_LINE_BYTES, type ReadLine } from './line-reader.js';
import { BRIDGE_ERROR, answerFrame, errorResponse, owedIds } from './owed.js';
import { ClientGone, initializeIds, type McpRelay } from './relay.js';

/** Lines owing answers (requests, batches with a request) relayed at once; one more is refused with a JSON-RPC error. */
export const MAX_REQUESTS_IN_FLIGHT = 64;
/**
 * Lines owing nothing (notifications, responses, lines answered by the bridge itself) still on
 * their way before stdin is paused. They are never refused: a `notifications/cancelled` must get
 * through while the calls it cancels run, and the gateway answers them 202 at once.
 */
export const MAX_QUIET_IN_FLIGHT = 16;

/**
 * The bytes of the lines in flight (read, not yet answered) at which stdin is paused until some
 * are answered: backpressure, nothing refused or lost. The lines held are then at most this plus
 * one line (`MAX_LINE_BYTES`): 42 MiB, against 80 lines of 33 MiB before.
 */
export const MAX_HELD_BYTES = 32 * 1024 * 1024;

/** Sockets the bridge may open to the gateway: one per line in flight. */
export const MAX_CONNECTIONS = MAX_REQUESTS_IN_FLIGHT + MAX_QUIET_IN_FLIGHT;

export interface InFlightOptions {
  readonly relay: McpRelay;
  /** Stops and restarts reading stdin: a flood of quiet lines waits in the pipe. */
  readonly pause: () => void;
  readonly resume: () => void;
  /** A write to the client failed: reported once, and nothing more is read or relayed. */
  readonly clientGone: (err: unknown) => void;
  /** One line for stderr: the first time stdin waits for the byte budget, how much is held. */
  readonly report?: (line: string) => void;
}

/**
 * The client's lines relayed concurrently, so a `notifications/cancelled` reaches the gateway while
 * the call it names still runs. Each line is its own POST and each answer is written when it comes
 * (correlated by the JSON-RPC id, as the client correlates them), so answers may come back out of
 * request order. Bounded: at most `MAX_REQUESTS_IN_FLIGHT` lines owing answers at once (one more is
 * answered at once with -32000 under each of its ids, and never sent), and stdin pauses while
 * `MAX_QUIET_IN_FLIGHT` others are on their way, or while the lines in flight hold
 * `MAX_HELD_BYTES`. A line over `MAX_LINE_BYTES` is answered at once, never sent. An
 * `initialize` is a barrier: lines read after it are sent once it is answered, so they carry the protocol version and session it negotiated.
 */
export class InFlight {
  private requests = 0;
  private quiet = 0;
  /** The bytes of the lines taken and not yet done with (`MAX_HELD_BYTES`). */
  private held = 0;
  private told = false;
  private readonly running = new Set<Promise<void>>();
  /** The `initialize` exchange later lines wait for, while it runs. */
  private barrier: Promise<void> | undefined;
  private gone = false;

  constructor(private readonly options: InFlightOptions) {}

  /** Relays one line read from the client (its answer, if any, is written when it comes). */
  take(line: ReadLine): void {
    if (this.gone) return;
    if (line.kind === 'too-long') {
      const refusal = messageFrame(errorResponse(line.id, tooLong()));
      this.track(false, 0, () => this.options.relay.answer(refusal));
      return;
    }
    const { frame, bytes } = line;
    const owed = owedIds(frame);
    if (owed.length > 0 && this.requests >= MAX_REQUESTS_IN_FLIGHT) {
      const refusal = answerFrame(frame.kind === 'batch', [], owed, overCap());
      if (refusal) this.track(false, 0, () => this.options.relay.answer(refusal));
      return;
    }
    const before = this.barrier;
    const task = this.track(owed.length > 0, bytes, () => (before ? before.then(() => this.options.relay.relay(frame)) : this.options.relay.relay(frame)));
    if (initializeIds(frame).length > 0) {
      const barrier = task.then(() => {
        if (this.barrier === barrier) this.barrier = undefined;
      });
      this.barrier = barrier;
    }
  }

  /** Resolves once every line taken so far has been relayed and answered (or the client has gone). */
  async drained(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }

  /** Whether a write to the client failed. */
  get clientHasGone(): boolean {
    return this.gone;
  }

  private track(owesAnswers: boolean, bytes: number, run: () => Promise<void>): Promise<void> {
    if (owesAnswers) this.requests += 1;
    else this.quiet += 1;
    this.held += bytes;
    this.flow();
    const task = run()
      .catch((err: unknown) => {
        // Only a failed write to the client gets here: nothing more can be answered.
        if (this.gone) return;
        this.gone = true;
        this.options.clientGone(err instanceof ClientGone ? err : new ClientGone(err));
      })
      .finally(() => {
        this.running.delete(task);
        if (owesAnswers) this.requests -= 1;
        else this.quiet -= 1;
        this.held -= bytes;
        if (!this.gone) this.flow();
      });
    this.running.add(task);
    return task;
  }

  /** Pauses stdin while the quiet lines or the bytes in flight are at their bound, else reads on. */
  private flow(): void {
    const full = this.held >= MAX_HELD_BYTES;
    if (full && !this.told) {
      this.told = true;
      this.options.report?.(`mcp-stdio: ${this.held} bytes of lines are in flight, the budget is ${MAX_HELD_BYTES} (${MAX_HELD_BYTES / 1024 / 1024} MiB): stdin is read on as answers come (said once)`);
    }
    if (full || this.quiet >= MAX_QUIET_IN_FLIGHT) this.options.pause();
    else this.options.resume();
  }
}

function overCap(): ErrorObject {
  return {
    code: BRIDGE_ERROR,
    message: `mcp-stdio: ${MAX_REQUESTS_IN_FLIGHT} requests are in flight already; this one was not sent (send it again once an answer has come)`,
    data: { maxInFlight: MAX_REQUESTS_IN_FLIGHT },
  };
}

function tooLong(): ErrorObject {
  return {
    code: BRIDGE_ERROR,
    message: `mcp-stdio: this line is over ${MAX_LINE_BYTES / 1024 / 1024} MiB (${MAX_LINE_BYTES} bytes), the most the gateway takes in a request body; it was not sent`,
    data: { maxLineBytes: MAX_LINE_BYTES },
  };
}
