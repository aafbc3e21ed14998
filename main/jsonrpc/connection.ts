import type { z } from 'zod';
import { Dispatcher } from './dispatcher.js';
import { ConnectionClosedError, RequestTimeoutError } from './errors.js';
import { messageFrame, type TransportFrame } from './frame.js';
import { RpcError } from './rpc-error.js';
import type { FrameTransport } from './transport.js';
import { JSONRPC_VERSION, type Params, type Request, type RequestId, type Response } from './wire.js';

export interface ConnectionOptions {
  /** Deadline for each outgoing request unless the call sets its own; none when unset. */
  readonly requestTimeoutMs?: number;
  /** Hears a response that names no pending request (late, duplicate, or id null); it is dropped. */
  readonly onUnmatchedResponse?: (response: Response) => void;
}

export interface RequestOptions {
  readonly timeoutMs?: number;
  /** Aborting gives up waiting: the call rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

interface Pending {
  readonly resolve: (response: Response) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * One live JSON-RPC peer over any FrameTransport: the outgoing half of the protocol layer (ids,
 * a pending map registered before sending, one write queue) plus a Dispatcher for what the peer
 * asks. Incoming frames are dispatched concurrently, so answers leave in completion order.
 *
 * Lifecycle: when the peer ends its input, calls still pending reject (no answer can come), the
 * frames already received are answered, then the output ends. `close()` stops at once: pending
 * calls reject, running handlers see their signal abort, late answers are dropped.
 */
export class Connection {
  private nextId = 1;
  private readonly pending = new Map<RequestId, Pending>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private writes: Promise<void> = Promise.resolve();
  private state: 'open' | 'ending' | 'closed' = 'open';
  private resolveClosed!: (failure: Error | undefined) => void;

  /** Settles once closed: with the transport failure that closed it, or `undefined`. */
  readonly closed: Promise<Error | undefined>;

  constructor(
    private readonly transport: FrameTransport,
    private readonly dispatcher: Dispatcher = new Dispatcher(),
    private readonly options: ConnectionOptions = {},
  ) {
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    transport.start((frame) => this.receive(frame)).then(
      () => this.finish(),
      (error: unknown) => this.close(error instanceof Error ? error : new Error(String(error))),
    );
  }

  /** Aborted when the connection closes. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** Calls `method` on the peer. Rejects with RpcError when the peer answers with an error. */
  request(method: string, params?: Params, options?: RequestOptions): Promise<unknown>;
  request<S extends z.ZodType>(method: string, params: Params | undefined, options: RequestOptions & { result: S }): Promise<z.output<S>>;
  request(method: string, params?: Params, options: RequestOptions & { result?: z.ZodType } = {}): Promise<unknown> {
    if (this.state !== 'open') return Promise.reject(new ConnectionClosedError());
    const id = this.nextId++;
    const message: Request = params === undefined ? { jsonrpc: JSONRPC_VERSION, id, method } : { jsonrpc: JSONRPC_VERSION, id, method, params };
    const timeoutMs = options.timeoutMs ?? this.options.requestTimeoutMs;
    const { signal, result: schema } = options;

    return new Promise<unknown>((resolve, reject) => {
      const onAbort = () => settle(() => reject(signal?.reason));
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => settle(() => reject(new RequestTimeoutError(method, timeoutMs))), timeoutMs);
      const settle = (finish: () => void) => {
        if (!this.pending.delete(id)) return;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        finish();
      };
      this.pending.set(id, {
        resolve: (response) =>
          settle(() => {
            if ('error' in response) return reject(RpcError.fromErrorObject(response.error));
            if (!schema) return resolve(response.result);
            const parsed = schema.safeParse(response.result);
            if (parsed.success) resolve(parsed.data);
            else reject(parsed.error);
          }),
        reject: (error) => settle(() => reject(error)),
      });
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.write(messageFrame(message)).catch((error: unknown) => settle(() => reject(error)));
    });
  }

  /** Sends a notification; resolves once the transport has taken it. */
  notify(method: string, params?: Params): Promise<void> {
    if (this.state !== 'open') return Promise.reject(new ConnectionClosedError());
    return this.write(messageFrame(params === undefined ? { jsonrpc: JSONRPC_VERSION, method } : { jsonrpc: JSONRPC_VERSION, method, params }));
  }

  /** Closes now. `failure`, if given, becomes the cause of every rejected call and the value of `closed`. */
  close(failure?: Error): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.rejectPending(new ConnectionClosedError(undefined, { cause: failure }));
    this.abort.abort(failure ?? new ConnectionClosedError());
    this.transport.close();
    this.resolveClosed(failure);
  }

  private receive(frame: TransportFrame): void {
    if (this.state === 'closed') return;
    const done: Promise<void> = this.dispatcher
      .dispatch(frame, { signal: this.abort.signal, onResponse: (response) => this.settle(response) })
      .then((answer) => (answer && this.state !== 'closed' ? this.write(answer) : undefined))
      .catch(() => undefined) // a failed write means the transport is going; `start` reports why
      .finally(() => this.inFlight.delete(done));
    this.inFlight.add(done);
  }

  private settle(response: Response): void {
    const waiting = response.id === null ? undefined : this.pending.get(response.id);
    if (waiting) waiting.resolve(response);
    else this.options.onUnmatchedResponse?.(response);
  }

  /** The write queue: one frame at a time, in call order, so frames never interleave. */
  private write(frame: TransportFrame): Promise<void> {
    const written = this.writes.then(() => this.transport.send(frame));
    this.writes = written.catch(() => undefined);
    return written;
  }

  /** The peer ended its input: answer what it asked, then end ours. */
  private async finish(): Promise<void> {
    if (this.state !== 'open') return this.close();
    this.state = 'ending';
    this.rejectPending(new ConnectionClosedError('jsonrpc: the peer ended the connection'));
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
    await this.writes;
    await this.transport.end().catch(() => undefined);
    this.close();
  }

  private rejectPending(error: ConnectionClosedError): void {
    for (const waiting of [...this.pending.values()]) waiting.reject(error);
  }
}
