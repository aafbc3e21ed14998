import type { ErrorObject, TransportFrame } from '../../jsonrpc/index.js';
import { BRIDGE_ERROR, answerFrame, owedIds } from './owed.js';
import { ClientGone, initializeIds, type McpRelay } from './relay.js';

/** Lines owing answers (requests, batches with a request) relayed at once; one more is refused with a JSON-RPC error. */
export const MAX_REQUESTS_IN_FLIGHT = 64;
/**
 * Lines owing nothing (notifications, responses, lines answered by the bridge itself) still on
 * their way before stdin is paused. They are never refused: a `notifications/cancelled` must get
 * through while the calls it cancels run, and the gateway answers them 202 at once.
 */
export const MAX_QUIET_IN_FLIGHT = 16;

/** Sockets the bridge may open to the gateway: one per line in flight. */
export const MAX_CONNECTIONS = MAX_REQUESTS_IN_FLIGHT + MAX_QUIET_IN_FLIGHT;

export interface InFlightOptions {
  readonly relay: McpRelay;
  /** Stops and restarts reading stdin: a flood of quiet lines waits in the pipe. */
  readonly pause: () => void;
  readonly resume: () => void;
  /** A write to the client failed: reported once, and nothing more is read or relayed. */
  readonly clientGone: (err: unknown) => void;
}

/**
 * The client's lines relayed concurrently, so a `notifications/cancelled` reaches the gateway while
 * the call it names still runs. Each line is its own POST and each answer is written when it comes
 * (correlated by the JSON-RPC id, as the client correlates them), so answers may come back out of
 * request order. Bounded: at most `MAX_REQUESTS_IN_FLIGHT` lines owing answers at once (one more is
 * answered at once with -32000 under each of its ids, and never sent), and stdin pauses while
 * `MAX_QUIET_IN_FLIGHT` others are on their way. An `initialize` is a barrier: lines read after
 * it are sent once it is answered, so they carry the protocol version and session it negotiated.
 */
export class InFlight {
  private requests = 0;
  private quiet = 0;
  private readonly running = new Set<Promise<void>>();
  /** The `initialize` exchange later lines wait for, while it runs. */
  private barrier: Promise<void> | undefined;
  private gone = false;

  constructor(private readonly options: InFlightOptions) {}

  /** Relays one line read from the client (its answer, if any, is written when it comes). */
  take(frame: TransportFrame): void {
    if (this.gone) return;
    const owed = owedIds(frame);
    if (owed.length > 0 && this.requests >= MAX_REQUESTS_IN_FLIGHT) {
      const refusal = answerFrame(frame.kind === 'batch', [], owed, overCap());
      if (refusal) this.track(false, () => this.options.relay.answer(refusal));
      return;
    }
    const before = this.barrier;
    const task = this.track(owed.length > 0, () => (before ? before.then(() => this.options.relay.relay(frame)) : this.options.relay.relay(frame)));
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

  private track(owesAnswers: boolean, run: () => Promise<void>): Promise<void> {
    if (owesAnswers) this.requests += 1;
    else if (++this.quiet >= MAX_QUIET_IN_FLIGHT) this.options.pause();
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
        else if (--this.quiet < MAX_QUIET_IN_FLIGHT && !this.gone) this.options.resume();
      });
    this.running.add(task);
    return task;
  }
}

function overCap(): ErrorObject {
  return {
    code: BRIDGE_ERROR,
    message: `mcp-stdio: ${MAX_REQUESTS_IN_FLIGHT} requests are in flight already; this one was not sent (send it again once an answer has come)`,
    data: { maxInFlight: MAX_REQUESTS_IN_FLIGHT },
  };
}
