import type { Duplex } from 'node:stream';
import { z } from 'zod';
import { FrameCodec, type Incoming } from '../fabric/codec/index.js';
import type { BrokerMessage, BrokerResultOf, BrokerResults, HelloResult, TaskRunParams } from '../fabric/wire/broker-to-worker.js';
import type { ParticipantCard, TaskOutcome } from '../fabric/wire/payloads.js';
import type { WireError } from '../fabric/wire/wire-error.js';
import { RequestId, TaskOutcome as TaskOutcomeSchema } from '../fabric/wire/payloads.js';
import { HelloParams, TaskEventParams, WorkerMessage } from '../fabric/wire/worker-to-broker.js';
import { AbortError } from './abort-error.js';
import { checkOutgoing } from './outgoing-check.js';
import { PendingCalls, type AbortOptions, type CallOptions } from './pending-calls.js';
import { RelayedQuestions, type QuestionHandler } from './relayed-questions.js';
import type { AgentInfo, Answer, InvokeResult, MailboxResult, QuestionInput, SpawnContextInput, Verdict } from './wire-types.js';

/** `finish(taskId, outcome)`'s arguments, checked by name. */
const FinishArguments = z.strictObject({ taskId: RequestId, outcome: TaskOutcomeSchema });

/** A task the broker asked this worker to run. */
export interface WorkerTask {
  /** The task.run's id: its events and its outcome name it. */
  id: number;
  params: TaskRunParams;
  /** Aborted when the broker cancels the task or the connection closes. */
  signal: AbortSignal;
}

/** `invokeAgent`'s options: the callee's spawn context, its progress, its withdrawal. */
export interface InvokeOptions extends CallOptions {
  /** The callee's spawn context (`spawn_context` on the wire); without one the broker derives it from this worker's. */
  spawnContext?: SpawnContextInput;
}

export interface AskOptions extends AbortOptions {
  /** A third-party peer this worker relays the question for; the broker keeps it as set. */
  origin?: string;
}

/** A call as written (fields with a wire default may be left out): any worker request but the hello. */
type WorkerRequestInput = Extract<z.input<typeof WorkerMessage>, { id: number }>;
type CallBody = WorkerRequestInput extends infer C
  ? C extends WorkerRequestInput
    ? C['method'] extends 'session.hello'
      ? never
      : Omit<C, 'v' | 'id'>
    : never
  : never;
type Method = keyof typeof BrokerResults;
type ResultOf<C extends { method: string }> = C['method'] extends Method ? BrokerResultOf<C['method']> : unknown;

/** A call answered with an error frame; `error` is the wire error as the broker sent it. */
export class BrokerError extends Error {
  constructor(readonly error: WireError) {
    super(error.message);
  }
}

/**
 * The worker's end of the connection: say hello, take tasks, send their events and outcomes, call
 * the broker, answer the questions it relays. It depends on the wire and its codec only, and writes
 * exactly the frames a hand-written worker would: each method is one frame, fields left out when
 * not given (never `params` on `agent.list`, never a default filled in).
 */
export class WorkerSession {
  /** Resolves with the reason once the connection is gone. */
  readonly closed: Promise<string>;
  private readonly codec = FrameCodec.forWorker();
  private readonly pending: PendingCalls;
  private readonly questions: RelayedQuestions;
  private readonly tasks: WorkerTask[] = [];
  private readonly taskWaiters: ((task: WorkerTask | undefined) => void)[] = [];
  private readonly running = new Map<number, AbortController>();
  private closeReason: string | undefined;
  private resolveClosed!: (reason: string) => void;

  private constructor(private readonly stream: Duplex) {
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    const log = (message: string): void => console.warn(`worker: ${message}`);
    this.pending = new PendingCalls((id) => this.write(this.codec.notify({ method: 'req.cancel', params: { id } })), log);
    this.questions = new RelayedQuestions(
      (id, result) => this.answer(id, () => this.codec.respond(id, result)),
      (id, error) => this.answer(id, () => this.codec.fail(id, error)),
    );
    stream.on('data', (chunk: Buffer) => {
      for (const incoming of this.codec.push(chunk)) this.receive(incoming);
    });
    stream.on('end', () => this.close('the broker closed the connection'));
    stream.on('close', () => this.close('the connection closed'));
    stream.on('error', (err) => this.close(`connection error: ${err.message}`));
  }

  /** Says hello over `stream`; resolves with the session and who the broker says this worker is. */
  static async hello(stream: Duplex, card: ParticipantCard, schema?: string): Promise<{ session: WorkerSession; hello: HelloResult }> {
    const params = schema === undefined ? { card } : { card, schema };
    checkOutgoing(HelloParams, params, 'hello');
    const session = new WorkerSession(stream);
    const { id, line } = session.codec.request({ method: 'session.hello', params });
    const answered = session.pending.add(id, {});
    session.write(line);
    const hello = (await answered) as HelloResult;
    return { session, hello };
  }

  /** Why the connection closed, once it has. */
  get reason(): string | undefined {
    return this.closeReason;
  }

  /** The next task, or undefined once the connection has closed. */
  nextTask(): Promise<WorkerTask | undefined> {
    const task = this.tasks.shift();
    if (task || this.closeReason !== undefined) return Promise.resolve(task);
    return new Promise((resolve) => this.taskWaiters.push(resolve));
  }

  /**
   * Sends one of the task's events (status or artifact); throws a `TypeError`/`RangeError` for one
   * the wire does not take, sending nothing. `call` is the name that error gives the call
   * (`taskEvents` says `events.status`).
   */
  event(params: z.input<typeof TaskEventParams>, call = 'event'): void {
    checkOutgoing(TaskEventParams, params, call);
    this.write(this.codec.notify({ method: 'task.event', params: params as TaskEventParams }));
  }

  /** Ends a task with its outcome (a terminal state); throws a `TypeError`/`RangeError` for one the wire does not take, sending nothing. */
  finish(taskId: number, outcome: TaskOutcome): void {
    checkOutgoing(FinishArguments, { taskId, outcome }, 'finish');
    this.running.delete(taskId);
    if (this.closeReason === undefined) this.write(this.codec.respond(taskId, outcome));
  }

  /**
   * Calls the broker (agent.invoke, agent.list, mailbox.post, human.*) with the body as it goes on
   * the wire. Rejects with a `BrokerError` for an error answer, an `AbortError` once `signal`
   * aborts (after sending `req.cancel`; a signal already aborted sends nothing), or
   * `disconnected: …` when the connection closes first. A body the wire does not take rejects at
   * once with a `TypeError` or `RangeError` naming the field, and nothing is sent (the broker would
   * close the connection for it).
   */
  call<C extends CallBody>(body: C, options: CallOptions = {}): Promise<ResultOf<C>> {
    try {
      checkOutgoing(WorkerMessage, { v: 3, id: 0, ...body }, body.method, ['params']);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    if (this.closeReason !== undefined) return Promise.reject(new Error(`disconnected: ${this.closeReason}`));
    if (options.signal?.aborted) return Promise.reject(new AbortError(`aborted before ${body.method} was sent`, options.signal));
    const { id, line } = this.codec.request(body as never);
    const result = this.pending.add(id, options);
    this.write(line);
    return result as Promise<ResultOf<C>>;
  }

  /**
   * `agent.invoke {agent, prompt, spawn_context?}`: runs a task on `agent` and resolves with its
   * result. `onProgress` sees each `req.progress` event (`{Admitted}`, `{Step}`, `{Text}`) in order,
   * all before this resolves. Aborting `signal` before the answer sends `req.cancel` and rejects
   * with an `AbortError` at once; an answer that came first has already resolved it.
   */
  invokeAgent(agent: string, prompt: string, options: InvokeOptions = {}): Promise<InvokeResult> {
    const { spawnContext, ...follow } = options;
    const params = spawnContext === undefined ? { agent, prompt } : { agent, prompt, spawn_context: spawnContext };
    return this.call({ method: 'agent.invoke', params }, follow);
  }

  /** `agent.list` (a request with no `params` at all): every role the broker has. */
  listAgents(options: AbortOptions = {}): Promise<AgentInfo[]> {
    return this.call({ method: 'agent.list' }, options);
  }

  /** `mailbox.post {to, text}`: `{status: 'pending', id}` or `{status: 'refused', reason}`. */
  postMessage(to: string, text: string, options: AbortOptions = {}): Promise<MailboxResult> {
    return this.call({ method: 'mailbox.post', params: { to, text } }, options);
  }

  /** `human.approve {kind, command_or_path, diff_stat?}`: the human's verdict (the broker stamps the asker). */
  approve(kind: 'exec' | 'write', commandOrPath: string, diffStat?: string, options: AbortOptions = {}): Promise<Verdict> {
    const params = diffStat === undefined ? { kind, command_or_path: commandOrPath } : { kind, command_or_path: commandOrPath, diff_stat: diffStat };
    return this.call({ method: 'human.approve', params }, options);
  }

  /** `human.ask {questions, origin?}`: resolves with the answers (the broker stamps the asker). */
  ask(questions: readonly QuestionInput[], options: AskOptions = {}): Promise<Answer[]> {
    const { origin, ...follow } = options;
    const params = origin === undefined ? { questions: [...questions] } : { questions: [...questions], origin };
    return this.call({ method: 'human.ask', params }, follow);
  }

  /**
   * Answers the questions the broker relays to this worker from its callees (`human.ask {question,
   * request}`). One handler at a time (setting another replaces it); returns a function that removes
   * it. Without a handler every relayed question is answered `"escalate"`.
   */
  onQuestion(handler: QuestionHandler): () => void {
    return this.questions.setHandler(handler);
  }

  close(reason = 'the worker closed the connection'): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    this.codec.close(reason);
    this.stream.end();
    const gone = new Error(`disconnected: ${reason}`);
    this.pending.rejectAll(gone);
    for (const run of this.running.values()) run.abort(gone);
    this.questions.withdrawAll(gone);
    for (const waiter of this.taskWaiters.splice(0)) waiter(undefined);
    this.resolveClosed(reason);
  }

  private write(line: string): void {
    if (this.closeReason === undefined) this.stream.write(`${line}\n`);
  }

  /** Answers one of the broker's requests, unless the connection is gone (then nobody waits for it). */
  private answer(id: number, encode: () => string): void {
    if (this.closeReason === undefined && this.codec.peerInFlight.has(id)) this.write(encode());
  }

  private receive(incoming: Incoming<BrokerMessage>): void {
    switch (incoming.type) {
      case 'close':
        this.close(incoming.reason);
        return;
      case 'dropped':
        return;
      case 'result':
        this.pending.resolve(incoming.frame.id, incoming.frame.result);
        return;
      case 'error':
        this.pending.reject(incoming.frame.id, new BrokerError(incoming.frame.error));
        return;
      case 'message':
        this.onMessage(incoming.frame);
    }
  }

  private onMessage(frame: BrokerMessage): void {
    switch (frame.method) {
      case 'task.run': {
        const abort = new AbortController();
        this.running.set(frame.id, abort);
        const task = { id: frame.id, params: frame.params, signal: abort.signal };
        const waiter = this.taskWaiters.shift();
        if (waiter) waiter(task);
        else this.tasks.push(task);
        return;
      }
      case 'human.ask':
        this.questions.receive(frame.id, frame.params);
        return;
      case 'req.cancel': {
        const reason = new Error('cancelled by the broker');
        const task = this.running.get(frame.params.id);
        if (task) task.abort(reason);
        else this.questions.withdraw(frame.params.id, reason);
        return;
      }
      case 'req.progress':
        this.pending.progress(frame.params.id, frame.params.event);
        return;
    }
  }
}
