import type { Duplex } from 'node:stream';
import type { z } from 'zod';
import type { AbortLike } from '../../jsonrpc/index.js';
import { FrameCodec, type Incoming } from '../codec/frame-codec.js';
import { bytesOver, FrameTooLargeError } from '../codec/frame-too-large.js';
import { IdTable } from '../codec/id-table.js';
import { CallGate, type CallGateOptions } from '../limits/call-gate.js';
import { CLOSE_GRACE_MS, HELLO_TIMEOUT_MS, MAX_WAITING_RELAYED_QUESTIONS, MAX_WAITING_TASK_RUNS } from '../limits/constants.js';
import { OutboundQueue } from '../limits/outbound-queue.js';
import { fitReply } from '../limits/reply-size.js';
import type { BrokerMessage, ProgressEvent, RelayedAskParams, TaskRunParams } from '../wire/broker-to-worker.js';
import type { ParticipantCard, TaskOutcome } from '../wire/payloads.js';
import { wireError, type WireError } from '../wire/wire-error.js';
import type { TaskEventParams, WorkerCall, WorkerMessage, WorkerResultOf } from '../wire/worker-to-broker.js';
import { CallError } from './call-error.js';
import { CallSignal } from './call-signal.js';
import type { AdmittedNode } from './directory.js';
import type { ParticipantRegistry } from './registry.js';
import { tooLargeFor, workerFrameCap } from './task-run-size.js';

export { CallError } from './call-error.js';

export interface CallContext {
  node: AdmittedNode;
  /** The worker's own id for the call (what its `req.progress` and `req.cancel` name). */
  id: number;
  /** Aborted when the worker cancels the call or the connection closes (made on its first read: see `CallSignal`). */
  readonly signal: AbortSignal;
  /** The same abort as `signal`, without an `AbortSignal`: what the hot path listens on. */
  abort: AbortLike;
  /**
   * Sends the worker a `req.progress` for this call, in order with everything else sent to it.
   * Returns undefined when the frame was queued at once (or dropped: the call was cancelled, the
   * connection closed); while the outbound queue is full, a promise that resolves once it is
   * queued or dropped (it never rejects). Returned from a task event listener, that promise is the
   * back-pressure on the connection the event came from: see `TaskEventListener`.
   */
  progress(event: ProgressEvent): Promise<void> | undefined;
  /**
   * Answers the call now, in this turn, with `result`: what resolving the handler's promise with
   * it does a promise turn or more later. The handler's promise still settles (with the same
   * result) and is then ignored. For a handler whose result is ready in a callback (a task's
   * outcome read from its callee), so that the answer is written right behind the frame that
   * caused it. Answering twice, or after the connection closed, does nothing. Returns what
   * `progress` does: undefined when the answer was queued at once (or dropped), else a promise
   * that resolves once it is queued or dropped. Returned from a task's outcome listener
   * (`sendTask`), that promise holds the reading of the connection the outcome came from.
   */
  answerNow(result: unknown): Promise<void> | undefined;
}

/**
 * Sees a task's `task.event` notifications. When it returns a promise, the connection reads no
 * more from its worker until that promise settles: a listener that forwards the event to a caller
 * whose outbound queue is full (a caller that stopped reading) pauses the callee that produces
 * the events, so what the broker holds for a non-reading caller stays bounded.
 */
export type TaskEventListener = ((event: TaskEventParams) => void) | ((event: TaskEventParams) => Promise<void>);

/** Runs a worker's call (agent.invoke, agent.list, mailbox.post, human.*); resolves to its result. */
export type CallHandler = (call: WorkerCall, context: CallContext) => Promise<unknown>;

export interface ServeOptions {
  /** Serves the worker's calls; without one every call is refused. */
  calls?: CallHandler;
  /** How long the worker has to say hello (default 30 s). */
  helloTimeoutMs?: number;
  /** The longest line read from the worker (default `MAX_FRAME_BYTES`). */
  maxFrameBytes?: number;
  /**
   * The longest line the worker reads (default `MAX_FRAME_BYTES`): a reply over it fails that call,
   * a task.run or request over it is refused before it is written (see `sendTask`).
   */
  workerMaxFrameBytes?: number;
  /** Call limits; `now` is the rate limit's clock. */
  limits?: CallGateOptions;
  /** After a refused hello, how long the worker has to read the error and close its end (default 5 s). */
  closeGraceMs?: number;
  log?: (message: string) => void;
}

export interface RunningTask {
  /** The task.run's id, which its events and a req.cancel name. */
  id: number;
  /** Always resolves: a task whose worker goes away ends `failed`, naming the disconnect. */
  outcome: Promise<TaskOutcome>;
}

/** A broker→worker request (other than task.run) waiting for the worker's answer. */
interface OwedRequest {
  resolve: (result: WorkerResultOf<'human.ask'>) => void;
  reject: (err: Error) => void;
}

/**
 * Gets a task's outcome, once (see `sendTask`). When it returns a promise, the connection reads no
 * more from its worker until that promise settles, as for a `TaskEventListener`: a caller's answer
 * waiting for room in its full queue pauses the callee whose outcome made it.
 */
export type OutcomeListener = (outcome: TaskOutcome) => void | Promise<void>;

interface OwedTask {
  /** Called once with the outcome (see `sendTask`). */
  resolve: OutcomeListener;
  onEvent: TaskEventListener | undefined;
}

const refuseAll: CallHandler = async () => {
  throw new CallError(wireError({ kind: 'refused', reason: 'this broker serves no calls' }));
};

/**
 * The broker's end of one worker connection, over any duplex stream. The connection is the
 * node's identity and its liveness: it registers the node when the worker says hello, and when it
 * closes, for whatever reason, the node is deregistered, its calls are aborted and every task it
 * still owed ends `failed`. There is no heartbeat.
 */
export class ParticipantConnection {
  readonly hello: Promise<ParticipantCard>;
  readonly closed: Promise<string>;
  readonly outbound: OutboundQueue;

  private readonly codec: FrameCodec<WorkerMessage, BrokerMessage>;
  private readonly gate: CallGate;
  private readonly handler: CallHandler;
  private readonly tasks = new IdTable<OwedTask>();
  private readonly calls = new IdTable<CallSignal>();
  private readonly requests = new IdTable<OwedRequest>();
  /** What task event listeners are still forwarding: reading waits for them (see `TaskEventListener`). */
  private readonly holds = new Set<Promise<void>>();
  /** The ids of this connection's task.runs waiting for room in its queue: at most `MAX_WAITING_TASK_RUNS` (see `sendTask`). */
  private readonly waitingTasks = new Set<number>();
  /** The ids of this connection's relayed questions waiting for room: at most `MAX_WAITING_RELAYED_QUESTIONS` (see `request`). */
  private readonly waitingQuestions = new Set<number>();
  private pausedForRoom = false;
  /** The frames of a chunk not yet acted on when reading was paused for room (see `act`). */
  private unread: Incoming<WorkerMessage>[] | undefined;
  private unreadAt = 0;
  /** Why the stream ended while frames of its last chunk were unread (see `endOnceRead`): the close waits for them. */
  private endedWhileHeld: string | undefined;
  private readonly helloTimer: NodeJS.Timeout;
  private readonly workerMaxFrameBytes: number;
  private readonly closeGraceMs: number;
  private readonly log: (message: string) => void;
  private helloSettled = false;
  private closeReason: string | undefined;
  private resolveHello!: (card: ParticipantCard) => void;
  private rejectHello!: (err: Error) => void;
  private resolveClosed!: (reason: string) => void;

  constructor(
    private readonly stream: Duplex,
    private readonly registry: ParticipantRegistry,
    readonly node: AdmittedNode,
    options: ServeOptions = {},
  ) {
    this.log = options.log ?? ((message) => console.warn(`fabric: ${node.name}: ${message}`));
    this.workerMaxFrameBytes = workerFrameCap(options);
    this.codec = FrameCodec.forBroker({ maxFrameBytes: options.maxFrameBytes, peerMaxFrameBytes: this.workerMaxFrameBytes, log: this.log });
    this.gate = new CallGate(options.limits);
    this.handler = options.calls ?? refuseAll;
    this.closeGraceMs = options.closeGraceMs ?? CLOSE_GRACE_MS;
    this.outbound = new OutboundQueue(stream);
    this.hello = new Promise((resolve, reject) => {
      this.resolveHello = resolve;
      this.rejectHello = reject;
    });
    this.hello.catch(() => {}); // a caller that never awaits it must not see an unhandled rejection
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    const helloMs = options.helloTimeoutMs ?? HELLO_TIMEOUT_MS;
    this.helloTimer = setTimeout(() => this.close(`no session.hello within ${helloMs / 1000} s`), helloMs).unref();

    stream.on('data', (chunk: Buffer) => this.act(this.codec.push(chunk), 0));
    stream.on('end', () => this.endOnceRead('the worker closed the connection'));
    stream.on('close', () => this.endOnceRead('the connection closed'));
    stream.on('error', (err) => this.close(`connection error: ${err.message}`));
  }

  get isOpen(): boolean {
    return this.closeReason === undefined;
  }

  /** Whether reading is paused until answers or forwarded task events find room (see `holdReading`). */
  get readingPaused(): boolean {
    return this.pausedForRoom;
  }

  /**
   * Whether reading waits for a caller: this worker's task events or outcomes waiting for room in
   * another connection's queue (see `TaskEventListener`), not for this connection's own answers.
   */
  get waitingForCaller(): boolean {
    return this.holds.size > 0;
  }

  /** Whether something waits for room: an answer in this connection's queue, or a hold (`waitingForCaller`). */
  private get waitingForRoom(): boolean {
    return this.outbound.waiters > 0 || this.waitingForCaller;
  }

  /**
   * Acts on a chunk's frames from `from` on. Stops at the first frame that leaves something waiting
   * for room (an answer in this connection's full queue, an event or outcome in a caller's: see
   * `holdReading`) and keeps the rest, to be acted on once it has room: a frame of ~50 bytes (a
   * task's outcome) can make an answer of megabytes (the task's kept text), so checking only after
   * the chunk let one read pile up one waiting answer per frame in it.
   */
  private act(frames: Incoming<WorkerMessage>[], from: number): void {
    for (let at = from; at < frames.length; at++) {
      // Closing (a refused hello, say) ends reading: the rest of the chunk is never acted on.
      if (this.closeReason !== undefined) return;
      this.receive(frames[at]!);
      if (!this.waitingForRoom) continue;
      if (at + 1 < frames.length) {
        this.unread = frames;
        this.unreadAt = at + 1;
      }
      break;
    }
    this.holdReading();
  }

  /**
   * Answers waiting for room in this connection's full queue, or task events waiting for room in
   * a caller's (see `TaskEventListener`): read (and act) no more until they are queued. A peer
   * that sends calls and never reads holds at most one waiting answer here, never an unbounded
   * pile; a task whose caller stopped reading is paused after one waiting event or outcome.
   */
  private holdReading(): void {
    if (this.pausedForRoom || this.closeReason !== undefined) return;
    if (!this.waitingForRoom) return;
    this.pausedForRoom = true;
    this.stream.pause();
    void Promise.all([this.outbound.whenNoWaiters(), ...this.holds]).then(() => {
      this.pausedForRoom = false;
      if (this.closeReason !== undefined) return;
      const unread = this.unread;
      if (unread !== undefined) {
        this.unread = undefined;
        this.act(unread, this.unreadAt);
        if (this.pausedForRoom) {
          // Held again by what was read. Once the stream has ended, a caller's hold is waited for
          // only while frames are left to act on, and never this connection's own answers.
          if (this.endedWhileHeld !== undefined && (this.unread === undefined || this.outbound.waiters > 0)) this.close(this.endedWhileHeld);
          return;
        }
      }
      if (this.endedWhileHeld !== undefined) return this.close(this.endedWhileHeld);
      this.stream.resume();
    });
  }

  /**
   * The stream ended (the worker closed its end, or exited). Frames of its last chunk still unread
   * because reading waits for a caller (an event or outcome waiting for room in the caller's
   * queue) are acted on first, then the connection closes: a socket whose data was all taken emits
   * 'end' though paused, and closing at once dropped them, so a worker that wrote its text and its
   * outcome together and exited was reported failed ('disconnected: …') whenever its caller read
   * slowly. Not when this connection's own answers wait: the worker is gone and nobody will read
   * them, so that wait would never end.
   */
  private endOnceRead(reason: string): void {
    if (this.closeReason !== undefined) return;
    if (this.unread !== undefined && this.outbound.waiters === 0) {
      this.endedWhileHeld ??= reason;
      return;
    }
    this.close(reason);
  }

  /** Why the connection closed, once it has. */
  get reason(): string | undefined {
    return this.closeReason;
  }

  /**
   * Sends a task.run; `onEvent` sees its task.event notifications. Waits while the outbound queue is
   * full. Rejects with what `sendTask` throws for a task.run that cannot be sent.
   */
  runTask(params: TaskRunParams, onEvent?: TaskEventListener): Promise<RunningTask> {
    let task: ReturnType<ParticipantConnection['startTask']>;
    try {
      task = this.startTask(params, onEvent);
    } catch (err) {
      return Promise.reject(err);
    }
    return task.queued ? task.queued.then(() => task) : Promise.resolve(task);
  }

  /**
   * `runTask` without a promise when none is needed: the task.run is queued at once when there is
   * room (`queued` undefined), else `queued` resolves once it is (or dropped: the connection
   * closed, and `close()` has failed the task already; or withdrawn, see `withdrawTask`).
   */
  startTask(params: TaskRunParams, onEvent?: TaskEventListener): RunningTask & { queued: Promise<void> | undefined } {
    let resolve!: (outcome: TaskOutcome) => void;
    const outcome = new Promise<TaskOutcome>((settle) => (resolve = settle));
    return { ...this.sendTask(params, onEvent, resolve), outcome };
  }

  /**
   * `startTask` with the outcome handed to `onOutcome` instead of a promise: called once, in the
   * same turn as what ends the task (its answer read, the connection closing; at once when it is
   * closed already), so that whoever waits on the task can answer its own caller in that turn,
   * without the promise turns in between. `onOutcome` must not throw (what it throws is logged).
   * A task.run that cannot be sent throws here, before anything is written, and `onOutcome` is never
   * called: one over the worker's frame cap (which would close its connection) as a `CallError`
   * (`failed`), one that cannot be encoded as what encoding threw. A task.run sent with `abort`
   * (not aborted yet; this task's alone, as `OutboundQueue.withdraw` drops every line sent with it)
   * that waits for room can be withdrawn by it (`withdrawTask`).
   *
   * At most `MAX_WAITING_TASK_RUNS` task.runs wait for room here (a worker that stopped reading),
   * whoever the callers are (the root, a worker, each helper of a tree): while one waits, the next is
   * refused at once, as a `CallError` (`refused`: `<name> is not reading…`), and its caller reads on.
   * So what the broker holds for a worker that stopped reading is its queue plus one task.run (up
   * to a frame). Before, each caller's task.runs waited (or each caller's reading was held behind
   * its own waiting task.run, its `req.cancel` unread): one frame per caller, and a tree makes as
   * many callers as it likes.
   */
  sendTask(params: TaskRunParams, onEvent: TaskEventListener | undefined, onOutcome: OutcomeListener, abort?: AbortLike): { id: number; queued: Promise<void> | undefined } {
    if (this.closeReason !== undefined) {
      this.deliver(onOutcome, this.disconnected());
      return { id: 0, queued: undefined };
    }
    if (this.waitingTasks.size >= MAX_WAITING_TASK_RUNS) throw this.notReading('a task.run');
    const { id, line } = this.encodeRequest(() => this.codec.request({ method: 'task.run', params }));
    this.tasks.set(id, { resolve: onOutcome, onEvent });
    const queued = this.outbound.offer(line, abort?.aborted ? undefined : abort);
    if (queued === undefined) return { id, queued: undefined };
    this.waitingTasks.add(id);
    const done = (): void => void this.waitingTasks.delete(id);
    return { id, queued: queued.then(done, done) };
  }

  /** The refusal of a task.run or relayed question while one of its kind waits for room (see `sendTask`, `request`). */
  private notReading(what: 'a task.run' | 'a question'): CallError {
    return new CallError(wireError({ kind: 'refused', reason: `${this.node.name} is not reading: ${what} already waits for room in its queue; try again once it reads` }));
  }

  /**
   * Takes back task `id`'s task.run while it still waits for room (sent with `abort`, see
   * `sendTask`): it is never written, and the connection keeps nothing of it (its listeners, its
   * line; `onOutcome` is never called). Its `queued` then resolves. False, changing nothing, when
   * the task.run is out already (queued or written) or the task is not this connection's.
   * Without it, a cancelled call to a participant that stopped reading left its task.run (its
   * prompt, up to a frame) waiting for as long as that participant lived.
   */
  withdrawTask(id: number, abort: AbortLike): boolean {
    if (!this.tasks.has(id) || this.outbound.withdraw(abort) === 0) return false;
    this.tasks.delete(id);
    this.waitingTasks.delete(id); // room for the next at once, not a promise turn later
    this.codec.forget(id);
    return true;
  }

  /** Encodes a request of the broker's; one too large for the worker becomes a `CallError` (`failed`) naming it. */
  private encodeRequest(encode: () => { id: number; line: string }): { id: number; line: string } {
    try {
      return encode();
    } catch (err) {
      throw err instanceof FrameTooLargeError ? tooLargeFor(this.node.name, err) : err;
    }
  }

  /** Hands a task its outcome; what the listener returns holds reading (see `OutcomeListener`). */
  private deliver(onOutcome: OutcomeListener, outcome: TaskOutcome): void {
    this.callListener("a task's outcome listener", () => onOutcome(outcome));
  }

  /** Asks the worker to stop a task (its outcome still comes as the task.run's answer). */
  async cancelTask(id: number): Promise<void> {
    if (this.closeReason !== undefined || !this.tasks.has(id)) return;
    await this.outbound.send(this.codec.notify({ method: 'req.cancel', params: { id } })).catch(() => {});
  }

  /**
   * Lets go of a task whose outcome was decided without the worker (its cancel grace ran out): its
   * outcome listener and event listener (and what they hold: the text kept for its caller) go, and
   * what the worker still sends for it (events, a late answer) is dropped as naming nothing in
   * flight. A worker that never ends its cancelled tasks otherwise kept each one for as long as it
   * lived. `onOutcome` is never called after this.
   */
  abandonTask(id: number): void {
    if (!this.tasks.delete(id)) return;
    this.codec.forget(id);
  }

  /**
   * Sends the worker a request of the broker's own (a relayed `human.ask {question, request}`);
   * resolves with the worker's result (`{answers}` or `"escalate"`), rejects with a `CallError`
   * carrying the worker's error, or `disconnected: …` if the connection closes first. When `signal`
   * aborts first, this rejects at once with an `AbortError`: a request still waiting for room is
   * withdrawn, never written; one out already is followed by a `req.cancel`, and the worker's late
   * answer is dropped. `signal` must be this request's alone (`withdraw` takes back every line sent
   * with it).
   *
   * At most `MAX_WAITING_RELAYED_QUESTIONS` wait for room here (a worker that stopped reading),
   * whoever asked them: while one waits, the next rejects at once with a `CallError` (`refused`:
   * `<name> is not reading…`), which its asker gets. Before, each waited: every helper under a caller
   * that stopped reading could have 4 questions of up to a frame each waiting in its queue.
   */
  request(method: 'human.ask', params: z.input<typeof RelayedAskParams>, signal?: AbortSignal): Promise<WorkerResultOf<'human.ask'>> {
    if (this.closeReason !== undefined) return Promise.reject(new Error(`disconnected: ${this.closeReason}`));
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (this.waitingQuestions.size >= MAX_WAITING_RELAYED_QUESTIONS) return Promise.reject(this.notReading('a question'));
    let id: number, line: string;
    try {
      ({ id, line } = this.encodeRequest(() => this.codec.request({ method, params: params as z.infer<typeof RelayedAskParams> })));
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.requests.delete(id)) return;
        this.codec.forget(id); // its late answer is dropped, not kept track of for the connection's life
        // Still waiting for room (a worker that stopped reading): taken back, never written, so
        // nothing to cancel. Left there, each withdrawn question (up to a frame) stayed for as long as
        // the worker lived without reading.
        const unsent = this.outbound.withdraw(signal!) > 0;
        if (unsent) this.waitingQuestions.delete(id); // room for the next at once, not a promise turn later
        if (!unsent && this.closeReason === undefined) void this.outbound.send(this.codec.notify({ method: 'req.cancel', params: { id } })).catch(() => {});
        reject(abortError(signal!));
      };
      const done = (): void => signal?.removeEventListener('abort', onAbort);
      this.requests.set(id, {
        resolve: (result) => (done(), resolve(result)),
        reject: (err) => (done(), reject(err)),
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      const queued = this.outbound.offer(line, signal);
      if (queued === undefined) return;
      this.waitingQuestions.add(id);
      const outOfWaiting = (): void => void this.waitingQuestions.delete(id);
      queued.then(outOfWaiting, outOfWaiting);
    });
  }

  /**
   * Closes the connection: deregisters the node, aborts its calls, fails what it owed. Idempotent.
   * Nothing more is read or acted on from here. With a `lastLine` (a refused hello's error) that
   * line is written and flushed before the stream goes (see `OutboundQueue.finish`); `closed`
   * resolves once the stream is gone.
   */
  close(reason: string, lastLine?: string): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    this.unread = undefined;
    clearTimeout(this.helloTimer);
    this.codec.close(reason);
    const gone = new Error(`disconnected: ${reason}`);
    let streamGone: Promise<void>;
    if (lastLine === undefined) {
      this.outbound.stop(gone);
      this.stream.destroy();
      streamGone = Promise.resolve();
    } else {
      streamGone = this.outbound.finish(gone, lastLine, this.closeGraceMs);
    }
    const failed = this.disconnected();
    const tasks = this.tasks.sortedValues();
    this.tasks.clear();
    this.deliverInTurn(tasks, failed, 0);
    const calls = this.calls.sortedValues();
    this.calls.clear();
    for (const call of calls) call.cancel(new Error(`disconnected: ${reason}`));
    const requests = this.requests.sortedValues();
    this.requests.clear();
    for (const request of requests) request.reject(new Error(`disconnected: ${reason}`));
    this.registry.deregister(this.node.name, this, reason);
    if (!this.helloSettled) this.rejectHello(new Error(reason));
    this.helloSettled = true;
    void streamGone.then(() => this.resolveClosed(reason));
  }

  /**
   * Hands the tasks still owed their outcome at close, one after another: the next once the
   * previous listener's promise (its caller's answer waiting for room) has settled. Reading cannot
   * be paused any more, and every task ended at once made every answer at once: a caller that
   * stopped reading got one waiting answer per task, each up to its kept text (25 of 512 KiB waited
   * in `test/broker/hostile-fat-answers.test.ts`; 4 MiB each at the default cap). The cost: a caller
   * whose task comes after such an answer has its outcome when that caller reads, goes, or it cancels.
   */
  private deliverInTurn(tasks: readonly OwedTask[], outcome: TaskOutcome, from: number): void {
    for (let at = from; at < tasks.length; at++) {
      let waiting: void | Promise<void>;
      try {
        waiting = tasks[at]!.resolve(outcome);
      } catch (err) {
        this.log(`a task's outcome listener threw: ${(err as Error)?.message ?? String(err)}`);
        continue;
      }
      if (!(waiting instanceof Promise)) continue;
      void waiting
        .catch((err: unknown) => this.log(`a task's outcome listener threw: ${(err as Error)?.message ?? String(err)}`))
        .then(() => this.deliverInTurn(tasks, outcome, at + 1));
      return;
    }
  }

  private disconnected(): TaskOutcome {
    return { state: 'failed', message: `disconnected: ${this.node.name}'s connection closed (${this.closeReason})` };
  }

  private receive(incoming: Incoming<WorkerMessage>): void {
    switch (incoming.type) {
      case 'close':
        this.close(incoming.reason);
        return;
      case 'dropped':
        return;
      case 'result':
        if (incoming.method !== 'task.run') this.settleRequest(incoming.frame.id, incoming.frame.result as WorkerResultOf<'human.ask'>);
        else this.settleTask(incoming.frame.id, incoming.frame.result as TaskOutcome);
        return;
      case 'error':
        if (incoming.method !== 'task.run') this.settleRequest(incoming.frame.id, new CallError(incoming.frame.error));
        else this.settleTask(incoming.frame.id, { state: 'failed', message: incoming.frame.error.message });
        return;
      case 'message':
        this.onMessage(incoming.frame);
    }
  }

  private settleTask(id: number, outcome: TaskOutcome): void {
    const task = this.tasks.get(id);
    if (!task) return;
    this.tasks.delete(id);
    this.deliver(task.resolve, outcome);
  }

  private settleRequest(id: number, answer: WorkerResultOf<'human.ask'> | CallError): void {
    const request = this.requests.get(id);
    this.requests.delete(id);
    if (answer instanceof CallError) request?.reject(answer);
    else request?.resolve(answer);
  }

  private onMessage(frame: WorkerMessage): void {
    switch (frame.method) {
      case 'session.hello':
        this.onHello(frame.id, frame.params.card);
        return;
      case 'task.event':
        this.onTaskEvent(frame.params);
        return;
      case 'req.cancel': {
        const call = this.calls.get(frame.params.id);
        if (!call) return;
        call.cancel(new Error('cancelled by the worker'));
        this.outbound.withdraw(call.abort); // its progress still waiting for room goes too
        return;
      }
      default:
        this.onCall(frame);
    }
  }

  /**
   * A task's event goes to its `onEvent`; a listener that throws (or rejects) is logged, never
   * thrown into the stream. A listener's promise holds reading until it settles.
   */
  private onTaskEvent(event: TaskEventParams): void {
    const listener = this.tasks.get(event.id)?.onEvent;
    if (listener) this.callListener('a task.event listener', () => listener(event));
  }

  /**
   * Calls a task's listener (`what`, in the log): one that throws (or rejects) is logged, never
   * thrown into the stream, and the promise it returns holds reading until it settles (see `holdReading`).
   */
  private callListener(what: string, call: () => void | Promise<void>): void {
    let forwarding: void | Promise<void>;
    try {
      forwarding = call();
    } catch (err) {
      this.log(`${what} threw: ${(err as Error)?.message ?? String(err)}`);
      return;
    }
    if (!(forwarding instanceof Promise) || this.closeReason !== undefined) return;
    const hold: Promise<void> = forwarding
      .catch((err: unknown) => this.log(`${what} threw: ${(err as Error)?.message ?? String(err)}`))
      .finally(() => this.holds.delete(hold));
    this.holds.add(hold);
  }

  private onHello(id: number, card: ParticipantCard): void {
    clearTimeout(this.helloTimer);
    const { name, scope, owner } = this.node;
    try {
      this.registry.register({ node: this.node, card, connection: this });
    } catch (err) {
      // The error under the hello's id is the last frame: flushed, then the connection closes.
      const reason = (err as Error).message;
      this.close(`hello refused: ${reason}`, this.codec.fail(id, wireError({ kind: 'refused', reason })));
      return;
    }
    // The card's name is ignored: the connection says who the worker is.
    void this.outbound.send(this.codec.respond(id, { name, scope, owner })).catch(() => {});
    this.helloSettled = true;
    this.resolveHello(card);
  }

  /**
   * Runs a worker's call. Not `async`: the handler's promise gets one reaction, and a handler that
   * answers in a callback (`CallContext.answerNow`) has its answer written in that turn.
   */
  private onCall(call: WorkerCall): void {
    const refusal = this.gate.admit();
    if (refusal) {
      this.reply(this.codec.fail(call.id, refusal));
      return;
    }
    const id = call.id;
    const cancel = new CallSignal();
    const { abort } = cancel;
    this.calls.set(id, cancel);
    // Waits for room like every frame; withdrawn when the call is cancelled or the connection
    // closes, so a callee paused for this caller is released at once.
    const progress = (event: ProgressEvent): Promise<void> | undefined => {
      if (this.closeReason !== undefined || abort.aborted) return undefined;
      const line = this.codec.notify({ method: 'req.progress', params: { id, event } });
      if (bytesOver(line, this.workerMaxFrameBytes) !== undefined) return inParts(event, progress);
      return this.outbound.offer(line, abort)?.catch(() => {});
    };
    const context = new WorkerCallContext(this.node, id, cancel, progress, this.answer);
    let running: Promise<unknown>;
    try {
      running = this.handler(call, context);
    } catch (err) {
      running = Promise.reject(err);
    }
    running.then(
      (result) => this.answer(context, true, result),
      (err: unknown) => this.answer(context, false, err),
    );
  }

  /**
   * A call's end, once (the first of `answerNow` and its handler's promise): its slot in the call
   * gate is free, and its answer (the result, or the error it failed with) is queued. Nothing is
   * sent once the connection has closed.
   */
  private readonly answer = (context: WorkerCallContext, ok: boolean, value: unknown): Promise<void> | undefined => {
    if (context.answered) return undefined;
    context.answered = true;
    this.gate.release();
    this.calls.delete(context.id);
    return this.closeReason === undefined ? this.reply(this.answerLine(context.id, ok, value)) : undefined;
  };

  /** A call's answer as a line; a result that cannot be encoded fails the call with what encoding threw. */
  private answerLine(id: number, ok: boolean, value: unknown): string {
    if (ok) {
      try {
        return fitReply(this.codec.respond(id, value), id, this.workerMaxFrameBytes);
      } catch (err) {
        value = err;
      }
    }
    const error = value instanceof CallError ? value.error : wireError({ kind: 'failed', reason: (value as Error)?.message ?? String(value) });
    return fitReply(this.codec.fail(id, error), id, this.workerMaxFrameBytes);
  }

  /** Queues a call's answer (waiting for room if need be; dropped if the connection closes first): a promise while it waits. */
  private reply(line: string): Promise<void> | undefined {
    return this.outbound.offer(line)?.catch(() => {});
  }
}

/**
 * A call's context. A class, not an object literal: a literal with a getter (`signal`) gets a
 * hidden class of its own every time it is made, and V8 makes those in its old generation, so
 * every call left garbage there for a full collection to find.
 */
class WorkerCallContext implements CallContext {
  readonly abort: AbortLike;
  /** Set once the call's answer is decided (see `ParticipantConnection.answer`). */
  answered = false;

  constructor(
    readonly node: AdmittedNode,
    readonly id: number,
    private readonly cancel: CallSignal,
    readonly progress: (event: ProgressEvent) => Promise<void> | undefined,
    private readonly answer: (context: WorkerCallContext, ok: boolean, value: unknown) => Promise<void> | undefined,
  ) {
    this.abort = cancel.abort;
  }

  get signal(): AbortSignal {
    return this.cancel.signal;
  }

  answerNow(result: unknown): Promise<void> | undefined {
    return this.answer(this, true, result);
  }
}

/**
 * Sends a progress event whose line is over the caller's frame cap (the call id in it is the
 * caller's choice: a 16-digit one makes a callee's event at the cap a few bytes too long) as two:
 * a `Text` in two halves, in order (the caller joins the texts: nothing is lost), a `Step` or
 * `Admitted` (a message, a name) cut to its first half. Each half is checked again. An event of
 * one character over the cap (a cap smaller than the envelope) is dropped: it cannot be sent.
 */
function inParts(event: ProgressEvent, progress: (event: ProgressEvent) => Promise<void> | undefined): Promise<void> | undefined {
  if (('Text' in event ? event.Text : 'Step' in event ? event.Step : event.Admitted).length < 2) return undefined;
  if ('Text' in event) {
    const at = halfway(event.Text);
    const first = progress({ Text: event.Text.slice(0, at) });
    const second = { Text: event.Text.slice(at) };
    return first ? first.then(() => progress(second)) : progress(second);
  }
  if ('Step' in event) return progress({ Step: event.Step.slice(0, halfway(event.Step)) });
  return progress({ Admitted: event.Admitted.slice(0, halfway(event.Admitted)) });
}

/** The middle of `text`, moved off a surrogate pair's second half so that neither part breaks a character. */
function halfway(text: string): number {
  const at = text.length >> 1;
  const unit = text.charCodeAt(at);
  return unit >= 0xdc00 && unit <= 0xdfff ? at + 1 : at;
}

/** What an aborted broker request rejects with. */
function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('aborted: the request was withdrawn', { cause: signal.reason }), { name: 'AbortError', code: 'ABORT_ERR' });
}
