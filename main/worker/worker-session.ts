import type { Duplex } from 'node:stream';
import { FrameCodec, type Incoming } from '../fabric/codec/index.js';
import type { BrokerMessage, BrokerResultOf, BrokerResults, HelloResult, TaskRunParams } from '../fabric/wire/broker-to-worker.js';
import type { ParticipantCard, TaskOutcome } from '../fabric/wire/payloads.js';
import type { WireError } from '../fabric/wire/wire-error.js';
import type { TaskEventParams, WorkerCall, WorkerMessage } from '../fabric/wire/worker-to-broker.js';

/** A task the broker asked this worker to run. */
export interface WorkerTask {
  /** The task.run's id: its events and its outcome name it. */
  id: number;
  params: TaskRunParams;
  /** Aborted when the broker cancels the task or the connection closes. */
  signal: AbortSignal;
}

type CallBody = WorkerCall extends infer C ? (C extends WorkerCall ? Omit<C, 'v' | 'id'> : never) : never;
type Method = keyof typeof BrokerResults;

/** A call answered with an error frame. */
export class BrokerError extends Error {
  constructor(readonly error: WireError) {
    super(error.message);
  }
}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (err: Error) => void;
}

/**
 * The worker's end of the connection: say hello, take tasks, send their events and outcomes, call
 * the broker. It depends on the wire and its codec only.
 */
export class WorkerSession {
  /** Resolves with the reason once the connection is gone. */
  readonly closed: Promise<string>;
  private readonly codec = FrameCodec.forWorker();
  private readonly pending = new Map<number, Pending>();
  private readonly tasks: WorkerTask[] = [];
  private readonly taskWaiters: ((task: WorkerTask | undefined) => void)[] = [];
  private readonly running = new Map<number, AbortController>();
  private closeReason: string | undefined;
  private resolveClosed!: (reason: string) => void;

  private constructor(private readonly stream: Duplex) {
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    stream.on('data', (chunk: Buffer) => {
      for (const incoming of this.codec.push(chunk)) this.receive(incoming);
    });
    stream.on('end', () => this.close('the broker closed the connection'));
    stream.on('close', () => this.close('the connection closed'));
    stream.on('error', (err) => this.close(`connection error: ${err.message}`));
  }

  /** Says hello over `stream`; resolves with the session and who the broker says this worker is. */
  static async hello(stream: Duplex, card: ParticipantCard, schema?: string): Promise<{ session: WorkerSession; hello: HelloResult }> {
    const session = new WorkerSession(stream);
    const hello = await session.call({ method: 'session.hello', params: schema === undefined ? { card } : { card, schema } } as never);
    return { session, hello: hello as HelloResult };
  }

  /** The next task, or undefined once the connection has closed. */
  nextTask(): Promise<WorkerTask | undefined> {
    const task = this.tasks.shift();
    if (task || this.closeReason !== undefined) return Promise.resolve(task);
    return new Promise((resolve) => this.taskWaiters.push(resolve));
  }

  /** Sends one of the task's events (status or artifact). */
  event(params: TaskEventParams): void {
    this.write(this.codec.notify({ method: 'task.event', params }));
  }

  /** Ends a task with its outcome (a terminal state). */
  finish(taskId: number, outcome: TaskOutcome): void {
    this.running.delete(taskId);
    this.write(this.codec.respond(taskId, outcome));
  }

  /** Calls the broker (agent.invoke, agent.list, mailbox.post, human.*). Rejects with a `BrokerError` for an error answer. */
  call<C extends CallBody>(body: C): Promise<C['method'] extends Method ? BrokerResultOf<C['method']> : unknown> {
    if (this.closeReason !== undefined) return Promise.reject(new Error(`disconnected: ${this.closeReason}`));
    const { id, line } = this.codec.request(body as never);
    const result = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.write(line);
    return result as never;
  }

  close(reason = 'the worker closed the connection'): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    this.codec.close(reason);
    this.stream.end();
    for (const p of this.pending.values()) p.reject(new Error(`disconnected: ${reason}`));
    this.pending.clear();
    for (const run of this.running.values()) run.abort(new Error(`disconnected: ${reason}`));
    for (const waiter of this.taskWaiters.splice(0)) waiter(undefined);
    this.resolveClosed(reason);
  }

  private write(line: string): void {
    if (this.closeReason === undefined) this.stream.write(`${line}\n`);
  }

  private receive(incoming: Incoming<BrokerMessage>): void {
    switch (incoming.type) {
      case 'close':
        this.close(incoming.reason);
        return;
      case 'dropped':
        return;
      case 'result':
      case 'error': {
        const pending = this.pending.get(incoming.frame.id);
        this.pending.delete(incoming.frame.id);
        if (incoming.type === 'result') pending?.resolve(incoming.frame.result);
        else pending?.reject(new BrokerError(incoming.frame.error));
        return;
      }
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
        // This worker has nobody to ask: the question goes on up the chain.
        this.write(this.codec.respond(frame.id, 'escalate'));
        return;
      case 'req.cancel':
        this.running.get(frame.params.id)?.abort(new Error('cancelled by the broker'));
        return;
      case 'req.progress':
        return;
    }
  }
}
