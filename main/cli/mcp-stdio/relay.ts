import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import {
  ErrorResponseSchema,
  isRequest,
  isResponse,
  parseFrame,
  serializeFrame,
  type ErrorObject,
  type Message,
  type RequestId,
  type TransportFrame,
} from '../../jsonrpc/index.js';
import { AnswerTooLargeError, MAX_ANSWER_BYTES, describeFailure, readBody, type GatewayHttp } from './gateway-http.js';
import { cancelledError } from '../../gateway/mcp/errors.js';
import { BRIDGE_ERROR, answerFrame, batchTooLongFrame, owedIds, parseErrorFrame, tooDeepFrame } from './owed.js';
import { RunningCalls, cancellationOf } from './running-calls.js';
import { SseParser } from './sse-parser.js';

export interface RelayOptions {
  readonly http: GatewayHttp;
  readonly module: string;
  /** Writes one frame to the client as one line; rejects when the client has gone. */
  readonly write: (frame: TransportFrame) => Promise<void>;
  /** One line for stderr: what the client cannot be told on stdout. */
  readonly report: (line: string) => void;
  /** The token as the runtime directory now has it, when it is not `refused` (a restarted gateway writes a new one). */
  readonly rereadToken: (refused: string) => string | undefined;
}

/** What the bridge reads of an `initialize` result: the version every later request announces. */
const InitializeResultSchema = z.object({ protocolVersion: z.string() });

/** The refusal bodies of the gateway's guards: `{"error": "..."}`. */
const PlainErrorSchema = z.object({ error: z.string() });

/** Everything one POST owes the client, kept while its answer is read. */
interface Exchange {
  readonly sentBatch: boolean;
  /** A value that is JSON but not JSON-RPC: the gateway's Invalid Request (id null) is its answer. */
  readonly sentMalformed: boolean;
  /** Ids still waiting for an answer, in the order they were sent. */
  owed: RequestId[];
  readonly initializeIds: readonly RequestId[];
  /** Answers to a batch that arrived one by one (as SSE events), written together as one array. */
  gathered: Message[];
  /** Bytes of the gathered answers' events: held together, they are capped together (`MAX_ANSWER_BYTES`). */
  gatheredBytes: number;
}

/**
 * Relays one frame from the client to `POST /mcp/<module>` and writes what is owed back: the
 * gateway's answer as it is when it is addressed to the client's ids, else a JSON-RPC error for
 * each request id concerned. Never throws for anything the gateway does; rejects only when a
 * write to the client fails.
 */
export class McpRelay {
  private readonly path: string;
  /** Announced on every request after `initialize` (MCP Streamable HTTP, `MCP-Protocol-Version`). */
  private protocolVersion: string | undefined;
  /** Sent back when a gateway ever sets one (this gateway is stateless and does not). */
  private sessionId: string | undefined;
  /** Single requests whose POST is open: a `notifications/cancelled` naming one drops it too. */
  private readonly calls = new RunningCalls();

  constructor(private readonly options: RelayOptions) {
    this.path = `/mcp/${encodeURIComponent(options.module)}`;
  }

  async relay(frame: TransportFrame): Promise<void> {
    if (frame.kind === 'malformed' && frame.reason === 'parse') return this.write(parseErrorFrame());
    // Answered here, never sent: the gateway would refuse it whole, and it need not pay for it.
    if (frame.kind === 'malformed' && frame.reason === 'batch-too-long') return this.write(batchTooLongFrame());
    if (frame.kind === 'malformed' && frame.reason === 'too-deep') {
      // Likewise. Before, it was posted as it was: with the gateway unreachable, its id (which
      // owedIds cannot read from a frame never parsed) was lost, and the client waited for ever.
      const refusal = tooDeepFrame(frame.top);
      return refusal === undefined ? undefined : this.write(refusal);
    }
    const exchange: Exchange = {
      sentBatch: frame.kind === 'batch',
      sentMalformed: frame.kind === 'malformed',
      owed: owedIds(frame),
      initializeIds: initializeIds(frame),
      gathered: [],
      gatheredBytes: 0,
    };
    let body: string;
    try {
      body = serializeFrame(frame);
    } catch (err) {
      // JSON.stringify is recursive (JSON.parse is not): a line nested some 8,000 deep parses but
      // cannot be re-encoded. Only that line is answered so; the session goes on.
      return this.fail(exchange, bridgeError(`mcp-stdio: this line is nested too deeply to re-encode (${describeFailure(err)}); it was not sent`));
    }
    const call = frame.kind === 'message' && exchange.owed.length === 1 ? this.calls.begin(exchange.owed[0]!) : undefined;
    const cancellation = cancellationOf(frame);
    try {
      await this.exchange(body, exchange, call?.signal);
    } finally {
      call?.end();
      // Once the gateway has had the cancellation: if it read it before the call, the call's POST is dropped now.
      if (cancellation) this.calls.cancel(cancellation.id, cancellation.reason);
    }
  }

  private async exchange(body: string, exchange: Exchange, signal: AbortSignal | undefined): Promise<void> {
    let res: IncomingMessage;
    try {
      res = await this.post(body, signal);
    } catch (err) {
      if (signal?.aborted) return this.fail(exchange, cancelledError(signal.reason).toErrorObject());
      return this.fail(exchange, bridgeError(`the gateway could not be reached: ${describeFailure(err)}`));
    }
    this.noteSession(res);
    try {
      if (isOk(res.statusCode) && isEventStream(res)) await this.relayEvents(res, exchange);
      else await this.relayBody(res, await readBody(res), exchange);
    } catch (err) {
      if (err instanceof ClientGone) throw err;
      if (err instanceof AnswerTooLargeError) return this.fail(exchange, bridgeError(`mcp-stdio: ${err.message}`));
      if (signal?.aborted) return this.fail(exchange, cancelledError(signal.reason).toErrorObject());
      return this.fail(exchange, bridgeError(`the connection to the gateway failed mid-answer: ${describeFailure(err)}`));
    }
  }

  /**
   * A 401 means the gateway restarted with a new token (nothing ran): read it again, retry once.
   * Lines are relayed concurrently, so the token may have been re-read already for another line.
   */
  private async post(body: string, signal: AbortSignal | undefined): Promise<IncomingMessage> {
    const sentWith = this.options.http.token;
    const res = await this.options.http.send('POST', this.path, this.headers(), body, signal);
    if (res.statusCode !== 401) return res;
    const token = this.options.rereadToken(sentWith);
    if (token === undefined) return res;
    res.resume();
    this.options.http.setToken(token);
    return this.options.http.send('POST', this.path, this.headers(), body, signal);
  }

  private headers(): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    if (this.protocolVersion !== undefined) headers['mcp-protocol-version'] = this.protocolVersion;
    if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
    return headers;
  }

  private noteSession(res: IncomingMessage): void {
    const id = res.headers['mcp-session-id'];
    if (typeof id === 'string' && id !== '') this.sessionId = id;
  }

  private async relayBody(res: IncomingMessage, text: string, exchange: Exchange): Promise<void> {
    const status = res.statusCode ?? 0;
    const answer = text.trim() === '' ? undefined : parseFrame(text);
    if (isOk(status)) {
      if (answer === undefined) {
        // 202 for notifications and responses: nothing goes back. A request must not go unanswered.
        if (exchange.owed.length === 0) return;
        return this.fail(exchange, bridgeError(`the gateway answered HTTP ${status} without an answer`, status));
      }
      if (answer.kind === 'malformed') return this.fail(exchange, bridgeError(`the gateway's answer (HTTP ${status}) is not JSON-RPC`, status));
      return this.deliverAll(answer, exchange, status);
    }
    // An error the gateway addressed to the client's ids (a trap, an unknown module) goes as it is.
    if (answer !== undefined && answer.kind !== 'malformed' && (isAddressed(answer) || exchange.sentMalformed)) {
      return this.deliverAll(answer, exchange, status);
    }
    return this.fail(exchange, httpError(status, res.statusMessage, answer));
  }

  private async relayEvents(res: IncomingMessage, exchange: Exchange): Promise<void> {
    const parser = new SseParser();
    res.setEncoding('utf8');
    for await (const chunk of res) {
      for (const event of parser.push(String(chunk))) await this.relayEvent(event.event, event.data, exchange);
    }
    for (const event of parser.end()) await this.relayEvent(event.event, event.data, exchange);
    // The gathered answers of a batch, and an error for any id the stream never answered.
    if (exchange.owed.length > 0 || exchange.gathered.length > 0) await this.fail(exchange, bridgeError("the gateway's event stream ended without an answer"));
  }

  private async relayEvent(event: string, data: string, exchange: Exchange): Promise<void> {
    if (event !== 'message') return;
    const frame = parseFrame(data);
    if (frame.kind === 'malformed') return this.options.report(`mcp-stdio: dropped an event that is not JSON-RPC: ${data.slice(0, 200)}`);
    // A batch's answers may come one event each; the client is owed one array, so gather them.
    if (exchange.sentBatch && frame.kind === 'message' && isResponse(frame.message) && takeOwed(exchange, frame.message.id)) {
      this.noteInitialize(frame.message, exchange);
      exchange.gathered.push(frame.message);
      exchange.gatheredBytes += Buffer.byteLength(data);
      if (exchange.gatheredBytes > MAX_ANSWER_BYTES) dropGathered(exchange);
      return;
    }
    await this.deliver(frame, exchange);
  }

  /**
   * Writes a whole answer, then answers any id it left unanswered (an answer under an id never
   * asked, a batch missing one): the client must never wait for ever. For a batch that is a
   * second array, with only those ids.
   */
  private async deliverAll(answer: TransportFrame, exchange: Exchange, status: number): Promise<void> {
    await this.deliver(answer, exchange);
    if (exchange.owed.length > 0) await this.fail(exchange, bridgeError(`the gateway's answer (HTTP ${status}) did not answer this request`, status));
  }

  /** Writes an answer the bridge made itself (a refusal), as one line. */
  answer(frame: TransportFrame): Promise<void> {
    return this.write(frame);
  }

  /** Writes an answer from the gateway, noting which ids it answers. */
  private async deliver(frame: TransportFrame, exchange: Exchange): Promise<void> {
    for (const message of messagesOf(frame)) {
      if (!isResponse(message)) continue;
      takeOwed(exchange, message.id);
      this.noteInitialize(message, exchange);
    }
    await this.write(frame);
  }

  /**
   * Answers every id still owed with `error` (after any gathered answers). A failure no id can
   * carry (a notification refused, the gateway gone) goes to stderr: stdout is JSON-RPC only.
   */
  private async fail(exchange: Exchange, error: ErrorObject): Promise<void> {
    const owed = exchange.owed;
    exchange.owed = [];
    const frame = answerFrame(exchange.sentBatch, exchange.gathered.splice(0), owed, error);
    if (frame === undefined) this.options.report(`mcp-stdio: ${error.message}`);
    else await this.write(frame);
  }

  private noteInitialize(message: Message, exchange: Exchange): void {
    if (!('result' in message) || !exchange.initializeIds.includes(message.id)) return;
    const result = InitializeResultSchema.safeParse(message.result);
    if (result.success) this.protocolVersion = result.data.protocolVersion;
  }

  private async write(frame: TransportFrame): Promise<void> {
    try {
      await this.options.write(frame);
    } catch (err) {
      throw new ClientGone(err);
    }
  }
}

/** A write to the client failed: the relay stops, since no later answer can be delivered either. */
export class ClientGone extends Error {
  override readonly name = 'ClientGone';

  constructor(cause: unknown) {
    super(`mcp-stdio: stdout is closed, the client has gone (${describeFailure(cause)})`, { cause });
  }
}

function isOk(status: number | undefined): boolean {
  return status !== undefined && status >= 200 && status < 300;
}

function isEventStream(res: IncomingMessage): boolean {
  return (res.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() === 'text/event-stream';
}

function messagesOf(frame: TransportFrame): Message[] {
  if (frame.kind === 'message') return [frame.message];
  if (frame.kind === 'batch') return frame.entries.flatMap((entry) => (entry.kind === 'message' ? [entry.message] : []));
  return [];
}

/** The ids of a frame's `initialize` requests. */
export function initializeIds(frame: TransportFrame): RequestId[] {
  return messagesOf(frame).flatMap((m) => (isRequest(m) && m.method === 'initialize' ? [m.id] : []));
}

/**
 * A batch's answers gathered past `MAX_ANSWER_BYTES` (each event under it, many together over): they
 * are let go and their ids owed again, so each gets the error with the rest; the stream is dropped.
 */
function dropGathered(exchange: Exchange): never {
  const ids = exchange.gathered.flatMap((m) => ('id' in m && m.id !== null ? [m.id] : []));
  exchange.owed = [...ids, ...exchange.owed];
  exchange.gathered = [];
  exchange.gatheredBytes = 0;
  throw new AnswerTooLargeError(MAX_ANSWER_BYTES);
}

function takeOwed(exchange: Exchange, id: RequestId | null): boolean {
  const at = id === null ? -1 : exchange.owed.indexOf(id);
  if (at < 0) return false;
  exchange.owed.splice(at, 1);
  return true;
}

/** An answer that names the client's ids: an array, or a response whose id is not null. */
function isAddressed(answer: TransportFrame): boolean {
  if (answer.kind === 'batch') return true;
  return answer.kind === 'message' && isResponse(answer.message) && answer.message.id !== null;
}

function bridgeError(message: string, httpStatus?: number): ErrorObject {
  return httpStatus === undefined ? { code: BRIDGE_ERROR, message } : { code: BRIDGE_ERROR, message, data: { httpStatus } };
}

/**
 * An HTTP error the gateway did not address to the client's ids: its JSON-RPC error when the body
 * has one (a 406 or 415 answers under id null), else the status and the guard's `error` text.
 */
function httpError(status: number, statusMessage: string | undefined, answer: TransportFrame | undefined): ErrorObject {
  if (answer?.kind === 'message') {
    const rpc = ErrorResponseSchema.safeParse(answer.message);
    if (rpc.success) return rpc.data.error;
  }
  const plain = answer?.kind === 'malformed' && answer.reason === 'shape' ? PlainErrorSchema.safeParse(answer.value) : undefined;
  const detail = plain?.success ? plain.data.error : statusMessage;
  return bridgeError(`the gateway answered HTTP ${status}${detail ? `: ${detail}` : ''}`, status);
}
