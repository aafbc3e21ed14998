import { cancelledError } from '../../gateway/mcp/errors.js';
import { isRequest, messageFrame, type ErrorObject, type RequestId, type TransportFrame } from '../../jsonrpc/index.js';
import { MAX_LINE_BYTES, type ReadLine } from './line-reader.js';
import { BRIDGE_ERROR, errorResponse, owedIds } from './owed.js';
import { ClientGone, initializeIds, type McpRelay } from './relay.js';
import { cancellationOf, sameId } from './running-calls.js';

/**
 * Lines owing answers (requests, batches with a request) relayed at once; the next ones wait
 * their turn (`waiting`), in the order read, and are never refused for it.
 */
export const MAX_REQUESTS_IN_FLIGHT = 64;
/**
 * Requests waiting their turn at which stdin is paused too (besides the byte budget): a flood of
 * small requests is not held without bound (a line takes more memory parsed than its bytes).
 */
export const MAX_REQUESTS_WAITING = 4096;
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

/** A request read past `MAX_REQUESTS_IN_FLIGHT`, waiting its turn. */
interface Waiting {
  readonly frame: TransportFrame;
  readonly bytes: number;
}

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
 * request order. Bounded: at most `MAX_REQUESTS_IN_FLIGHT` lines owing answers at once (the next
 * wait their turn and are sent in the order read; a `notifications/cancelled` naming one drops it,
 * answered -32800 and never sent), and stdin pauses while `MAX_QUIET_IN_FLIGHT` others are on
 * their way, while `MAX_REQUESTS_WAITING` requests wait, or while the lines held (in flight or
 * waiting) hold `MAX_HELD_BYTES`. A line over `MAX_LINE_BYTES` is answered at once, never sent. An
 * `initialize` is a barrier: lines read after it are sent once it is answered, so they carry the protocol version and session it negotiated.
 */
export class InFlight {
  private requests = 0;
  private quiet = 0;
  /** The bytes of the lines taken and not yet done with (`MAX_HELD_BYTES`). */
  private held = 0;
  private told = false;
  /** Requests read past the bound, in the order read. */
  private readonly waiting: Waiting[] = [];
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
    const cancellation = cancellationOf(frame);
    if (cancellation) this.dropWaiting(cancellation.id, cancellation.reason);
    this.held += bytes; // until it is answered, or dropped while it waits
    const owesAnswers = owedIds(frame).length > 0;
    if (owesAnswers && (this.requests >= MAX_REQUESTS_IN_FLIGHT || this.waiting.length > 0)) {
      this.waiting.push({ frame, bytes });
      this.flow();
      return;
    }
    this.send(frame, bytes, owesAnswers);
  }

  /** Relays `frame` now (after a running `initialize`, if one is). */
  private send(frame: TransportFrame, bytes: number, owesAnswers: boolean): void {
    const before = this.barrier;
    const task = this.track(owesAnswers, bytes, () => (before ? before.then(() => this.options.relay.relay(frame)) : this.options.relay.relay(frame)));
    if (initializeIds(frame).length > 0) {
      const barrier = task.then(() => {
        if (this.barrier === barrier) this.barrier = undefined;
      });
      this.barrier = barrier;
    }
  }

  /**
   * A cancellation naming a single request still waiting its turn: that request is answered as the
   * gateway answers a cancelled call (-32800) and never sent. (A request inside a waiting batch is
   * left to the notification, as in flight.)
   */
  private dropWaiting(id: RequestId, reason: string): void {
    for (let at = this.waiting.length - 1; at >= 0; at--) {
      const { frame, bytes } = this.waiting[at]!;
      if (frame.kind !== 'message' || !isRequest(frame.message) || !sameId(frame.message.id, id)) continue;
      this.waiting.splice(at, 1);
      this.held -= bytes;
      const answer = messageFrame(errorResponse(frame.message.id, cancelledError(reason).toErrorObject()));
      this.track(false, 0, () => this.options.relay.answer(answer));
    }
  }

  /** Sends the requests waiting their turn while there is room. */
  private sendWaiting(): void {
    while (!this.gone && this.requests < MAX_REQUESTS_IN_FLIGHT && this.waiting.length > 0) {
      const { frame, bytes } = this.waiting.shift()!;
      this.send(frame, bytes, true);
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

  /** Runs `run` as one line in flight; once it is done, the `bytes` its line held are freed. */
  private track(owesAnswers: boolean, bytes: number, run: () => Promise<void>): Promise<void> {
    if (owesAnswers) this.requests += 1;
    else this.quiet += 1;
    this.flow();
    const task = run()
      .catch((err: unknown) => {
        // Only a failed write to the client means it has gone: nothing more can be answered.
        // Anything else (a bug) costs this line only, said on stderr; the session goes on.
        if (!(err instanceof ClientGone)) return this.options.report?.(`mcp-stdio: a line was lost: ${err instanceof Error ? err.message : String(err)}`);
        if (this.gone) return;
        this.gone = true;
        this.options.clientGone(err);
      })
      .finally(() => {
        this.running.delete(task);
        if (owesAnswers) this.requests -= 1;
        else this.quiet -= 1;
        this.held -= bytes;
        if (this.gone) return;
        this.sendWaiting();
        this.flow();
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
    if (full || this.quiet >= MAX_QUIET_IN_FLIGHT || this.waiting.length >= MAX_REQUESTS_WAITING) this.options.pause();
    else this.options.resume();
  }
}

function tooLong(): ErrorObject {
  return {
    code: BRIDGE_ERROR,
    message: `mcp-stdio: this line is over ${MAX_LINE_BYTES / 1024 / 1024} MiB (${MAX_LINE_BYTES} bytes), the most the gateway takes in a request body; it was not sent`,
    data: { maxLineBytes: MAX_LINE_BYTES },
  };
}
