import type { z } from 'zod';
import { classifyEntry, classifyMalformed, classifyMessage, type Incoming } from './classify.js';
import { BATCH_TOO_LONG_MESSAGE, TOO_DEEP_MESSAGE, batchFrame, isNonEmpty, messageFrame, type TransportFrame } from './frame.js';
import { RpcError } from './rpc-error.js';
import { JSONRPC_VERSION, type Notification, type Params, type Request, type RequestId, type Response } from './wire.js';

/** What a handler learns about the call besides its params. */
export interface HandlerContext {
  readonly method: string;
  /** The request's id; `undefined` for a notification. */
  readonly id: RequestId | undefined;
  /** Aborted when whoever asked goes away: the connection closes, or the HTTP client disconnects. */
  readonly signal: AbortSignal;
  /**
   * Who asked, as the transport names them (an SSE session, a protocol session id), or
   * `undefined`: request ids are unique per peer only, so a cancellation is matched within it.
   */
  readonly peer: string | undefined;
}

/** Returns the result (or a promise of it); `undefined` is answered as `null`. Throw an RpcError to choose the error. */
export type RequestHandler<P> = (params: P, context: HandlerContext) => unknown;
export type NotificationHandler<P> = (params: P, context: HandlerContext) => void | Promise<void>;

export interface DispatcherOptions {
  /**
   * Hears every failure that is not sent to the peer as it is: a non-RpcError thrown by a request
   * handler (the peer sees only "Internal error") and anything a notification handler throws.
   */
  readonly onHandlerError?: (error: unknown, method: string) => void;
}

export interface DispatchOptions {
  /** Passed to handlers as `context.signal`; a signal that never aborts when absent. */
  readonly signal?: AbortSignal;
  /** Receives each response the peer sent (single or inside a batch); ignored when absent. */
  readonly onResponse?: (response: Response) => void;
  /** Passed to handlers as `context.peer`. */
  readonly peer?: string;
}

type Entry = { readonly schema: z.ZodType | undefined; readonly handler: (params: unknown, context: HandlerContext) => unknown };

const NEVER_ABORTED = new AbortController().signal;

/**
 * The handler table and the incoming half of the protocol layer: it answers calls and knows
 * nothing about ids it assigned or about transports. A Connection feeds it frames from a live
 * peer; `dispatchOnce` feeds it one HTTP body. So a handler set registered once serves every
 * transport.
 *
 * Batch rules: entries are classified and dispatched in source order (every handler is invoked
 * before the first await), one response array follows once every response-bearing entry has
 * completed, a batch with nothing to answer gets nothing, and an invalid call-shaped entry gets
 * its own Invalid Request without stopping its siblings.
 */
export class Dispatcher {
  private readonly requests = new Map<string, Entry>();
  private readonly notifications = new Map<string, Entry>();

  constructor(private readonly options: DispatcherOptions = {}) {}

  /** Registers a request handler; with a schema, params that fail it are answered -32602. */
  onRequest<S extends z.ZodType>(method: string, schema: S, handler: RequestHandler<z.output<S>>): this;
  onRequest(method: string, handler: RequestHandler<Params | undefined>): this;
  onRequest(method: string, ...args: [z.ZodType, RequestHandler<never>] | [RequestHandler<never>]): this {
    register(this.requests, method, args);
    return this;
  }

  /** Registers a notification handler; params that fail the schema are reported, never answered. */
  onNotification<S extends z.ZodType>(method: string, schema: S, handler: NotificationHandler<z.output<S>>): this;
  onNotification(method: string, handler: NotificationHandler<Params | undefined>): this;
  onNotification(method: string, ...args: [z.ZodType, NotificationHandler<never>] | [NotificationHandler<never>]): this {
    register(this.notifications, method, args);
    return this;
  }

  /** Handles one incoming frame; resolves to the frame to send back, or `undefined` when nothing is owed. Never rejects. */
  async dispatch(frame: TransportFrame, options: DispatchOptions = {}): Promise<TransportFrame | undefined> {
    switch (frame.kind) {
      case 'message': {
        const answer = await this.start(classifyMessage(frame.message), options);
        return answer && messageFrame(answer);
      }
      case 'batch': {
        const slots = frame.entries.map((entry) => this.start(classifyEntry(entry), options));
        const answers = (await Promise.all(slots)).filter((answer) => answer !== undefined);
        return isNonEmpty(answers) ? batchFrame(answers) : undefined;
      }
      case 'malformed': {
        // Not JSON: Parse error under id null. JSON but no message (the empty array included):
        // Invalid Request, unless it is a response, which is never answered.
        if (frame.reason === 'parse') return messageFrame(errorResponse(null, RpcError.parseError()));
        // A batch over the entry cap: refused whole, as one Invalid Request, none of it run.
        if (frame.reason === 'batch-too-long') return messageFrame(errorResponse(null, RpcError.invalidRequest(BATCH_TOO_LONG_MESSAGE)));
        // Nested too deeply to be parsed: its top-level members say whether (and under which id) it is answered.
        if (frame.reason === 'too-deep') {
          const incoming = classifyMalformed(frame.top);
          return incoming.kind === 'invalid' ? messageFrame(errorResponse(incoming.id, RpcError.invalidRequest(TOO_DEEP_MESSAGE))) : undefined;
        }
        const answer = await this.start(classifyMalformed(frame.value), options);
        return answer && messageFrame(answer);
      }
    }
  }

  /** Starts one entry synchronously (so source order is dispatch order); the promise is its answer. */
  private start(incoming: Incoming, options: DispatchOptions): Promise<Response | undefined> {
    switch (incoming.kind) {
      case 'request':
        return this.answer(incoming.request, options);
      case 'notification':
        this.notify(incoming.notification, options);
        return Promise.resolve(undefined);
      case 'response':
        options.onResponse?.(incoming.response);
        return Promise.resolve(undefined);
      case 'invalid':
        return Promise.resolve(errorResponse(incoming.id, RpcError.invalidRequest()));
      case 'ignored':
        return Promise.resolve(undefined);
    }
  }

  private async answer(request: Request, options: DispatchOptions): Promise<Response> {
    const context: HandlerContext = { method: request.method, id: request.id, signal: options.signal ?? NEVER_ABORTED, peer: options.peer };
    try {
      const entry = this.requests.get(request.method);
      if (!entry) throw RpcError.methodNotFound();
      const result: unknown = await entry.handler(validParams(entry, request.params), context);
      return { jsonrpc: JSONRPC_VERSION, id: request.id, result: result === undefined ? null : result };
    } catch (error) {
      return errorResponse(request.id, this.exposed(error, request.method));
    }
  }

  private notify(notification: Notification, options: DispatchOptions): void {
    const entry = this.notifications.get(notification.method);
    if (!entry) return; // JSON-RPC: a notification is never answered, not even "method not found"
    const context: HandlerContext = { method: notification.method, id: undefined, signal: options.signal ?? NEVER_ABORTED, peer: options.peer };
    const report = (error: unknown) => this.options.onHandlerError?.(error, notification.method);
    try {
      Promise.resolve(entry.handler(validParams(entry, notification.params), context)).catch(report);
    } catch (error) {
      report(error);
    }
  }

  /** An RpcError goes to the peer as thrown; anything else is reported here and hidden behind -32603. */
  private exposed(error: unknown, method: string): RpcError {
    if (error instanceof RpcError) return error;
    this.options.onHandlerError?.(error, method);
    return RpcError.internalError();
  }
}

function register(
  table: Map<string, Entry>,
  method: string,
  args: [z.ZodType, (params: never, context: HandlerContext) => unknown] | [(params: never, context: HandlerContext) => unknown],
): void {
  if (table.has(method)) throw new Error(`jsonrpc: a handler for '${method}' is already registered`);
  const [schema, handler] = args.length === 2 ? args : [undefined, args[0]];
  // The overloads tie each handler to its schema's output; the table stores them untyped.
  table.set(method, { schema, handler: handler as Entry['handler'] });
}

/** Params as the handler expects them, or an Invalid params error naming what failed. */
function validParams(entry: Entry, params: Params | undefined): unknown {
  if (!entry.schema) return params;
  const parsed = entry.schema.safeParse(params);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => ({ path: issue.path.map(String), message: issue.message }));
  throw RpcError.invalidParams('Invalid params', { issues });
}

function errorResponse(id: RequestId | null, error: RpcError): Response {
  return { jsonrpc: JSONRPC_VERSION, id, error: error.toErrorObject() };
}
