import { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import type { GatewayContext } from '../context.js';
import { GrowingBody } from '../reading/growing-body.js';
import type { ReadingBodies } from '../reading/reading-bodies.js';
import type { RemoteRunnerSettings } from './options.js';
import { errorEvent, oneLine, relayEvents } from './sse-relay.js';
import { INTERNAL_ERROR, isRpcResponseText, rpcError, type RpcId } from './wire.js';

/** The largest JSON answer the gateway reads from the runner (it reads it whole to check it is JSON-RPC). */
export const MAX_UPSTREAM_JSON_BYTES = 32 * 1024 * 1024;

/**
 * Request headers passed upstream, each exactly as the caller sent it (names and values byte for
 * byte, none added): the body's type, what the caller accepts (JSON or an event stream), the A2A
 * version (a 1.0 client sends `1.0`, a genuine 0.3 client sends nothing) and extensions. Never the
 * caller's `Authorization`: that is the gateway's token.
 */
const PASSED_HEADERS = new Set(['content-type', 'accept', 'a2a-version', 'a2a-extensions', 'x-a2a-extensions']);

/**
 * Passed headers that hold one value, by their spelling in messages. Sent twice, the gateway
 * reads the first (Node keeps it) while a runner may read the last: the charset the gateway
 * checked, or the dialect its owned-task check read, would not be the runner's. The others
 * (`Accept`, the extensions) are lists, which HTTP lets a client split over several lines.
 */
const SINGLE_HEADERS = new Map([
  ['content-type', 'Content-Type'],
  ['a2a-version', 'A2A-Version'],
]);

/**
 * The first single-valued passed header the request carries more than once (by its usual
 * spelling), or `undefined`. Two lines count, and so does one line holding two values joined by a
 * comma (outside a quoted string), as HTTP lets a sender or a proxy join a field's lines: the
 * gateway's parser reads no charset in `application/json, application/json; charset=utf-7`, a
 * runner may read the second.
 */
export function repeatedSingleHeader(rawHeaders: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (!SINGLE_HEADERS.has(name)) continue;
    if (seen.has(name) || withoutQuoted(rawHeaders[i + 1]!).includes(',')) return SINGLE_HEADERS.get(name);
    seen.add(name);
  }
  return undefined;
}

/**
 * A parameter a `Content-Type` value names more than once (`charset=utf-7; charset=utf-8`), by
 * its name in lower case, or `undefined`: the gateway's parser keeps the last, a runner may keep
 * the first.
 */
export function repeatedContentTypeParameter(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const seen = new Set<string>();
  for (const part of withoutQuoted(contentType).split(';').slice(1)) {
    const name = part.split('=')[0]!.trim().toLowerCase();
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

/** `value` with each quoted string emptied (`"a,b"` as `""`): a comma or `;` inside one is text. */
function withoutQuoted(value: string): string {
  return value.replace(/"(?:[^"\\]|\\.)*"?/g, '""');
}

/** The runner's answer could not be relayed: a JSON-RPC error, 502. */
class BadUpstream extends Error {}

/**
 * The forward to the remote runner: `POST /a2a/{name}` goes to `<url>/a2a/<name>` with the body as
 * it came, and the answer comes back as it goes (undici, one connection pool per gateway).
 */
export class RemoteRunner {
  private readonly agent: Agent;
  /** Where the runner is, for messages: the URL without any credentials. */
  readonly shownUrl: string;

  /** `bodies`: the gateway's ledger of bodies being read, where the runner's answers count while they come. */
  constructor(
    readonly settings: RemoteRunnerSettings,
    private readonly bodies: ReadingBodies,
  ) {
    // undici's body timeout is the idle timeout: it runs while the answer is being received and
    // restarts with every chunk, it is held while the client is slow to read (the relay then stops
    // pulling), and when it fires it destroys the upstream connection.
    this.agent = new Agent({
      connect: { timeout: settings.connectTimeoutMs },
      headersTimeout: settings.firstByteTimeoutMs,
      bodyTimeout: settings.idleTimeoutMs,
    });
    this.shownUrl = settings.base;
  }

  /** The runner's URL for module `name`. */
  upstreamUrl(name: string): string {
    return `${this.settings.base}/a2a/${encodeURIComponent(name)}`;
  }

  /** Ends every upstream request still open (the gateway is stopping). */
  close(): Promise<void> {
    return this.agent.destroy();
  }

  /** Forwards the request on `ctx` to module `name`; `id` is the request's, for error answers. */
  async forward(ctx: GatewayContext, name: string, id: RpcId): Promise<void> {
    const controller = new AbortController();
    let clientGone = false;
    const onClose = (): void => {
      if (ctx.res.writableFinished) return;
      clientGone = true;
      controller.abort(new Error('the client hung up'));
    };
    ctx.res.once('close', onClose);
    if (ctx.req.socket.destroyed) onClose();

    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(this.upstreamUrl(name), {
        method: 'POST',
        headers: this.upstreamHeaders(ctx),
        body: ctx.state.rawBody ?? Buffer.alloc(0),
        signal: controller.signal,
        dispatcher: this.agent,
      });
    } catch (err) {
      if (clientGone) return gone(ctx);
      return badGateway(ctx, id, this.failureMessage(err));
    }

    const status = response.statusCode;
    const contentType = headerText(response.headers['content-type']);
    if (clientGone) {
      response.body.destroy();
      return gone(ctx);
    }

    if (status >= 200 && status < 300 && mediaType(contentType) === 'text/event-stream') {
      ctx.status = status;
      ctx.set('Content-Type', contentType ?? 'text/event-stream');
      ctx.set('Cache-Control', 'no-cache');
      ctx.set('X-Accel-Buffering', 'no');
      const events = relayEvents(response.body as AsyncIterable<Buffer>, id, this.bodies, {
        clientGone: () => clientGone,
        abortUpstream: (reason) => controller.abort(reason),
        letGo: () => letGoMessage(this.bodies),
        brokeOff: (err) => (errorCode(err) === 'UND_ERR_BODY_TIMEOUT' ? this.silentMessage() : `the remote runner's stream broke off: ${oneLine(err)}`),
      });
      const stream = Readable.from(events, { objectMode: false });
      stream.on('error', () => {
        if (!clientGone && !ctx.res.writableEnded) ctx.res.end(errorEvent(id, 'the relay failed'));
      });
      ctx.body = stream;
      return;
    }

    let bytes: Buffer;
    try {
      bytes = await readJson(response.body, this.bodies);
    } catch (err) {
      if (clientGone) return gone(ctx);
      if (errorCode(err) === 'UND_ERR_BODY_TIMEOUT') return badGateway(ctx, id, this.silentMessage());
      return badGateway(ctx, id, err instanceof BadUpstream ? err.message : `the remote runner's answer broke off: ${oneLine(err)}`);
    }
    if (bytes.length === 0 && (status === 202 || status === 204)) {
      // Nothing owed (a notification): relayed as it is.
      ctx.body = null;
      ctx.status = status;
      return;
    }
    if (!isRpcResponseText(bytes.toString('utf8'))) {
      return badGateway(
        ctx,
        id,
        `the remote runner at ${this.shownUrl} answered HTTP ${status} (${contentType ?? 'no Content-Type'}) with no JSON-RPC response`,
      );
    }
    ctx.status = status;
    ctx.set('Content-Type', contentType ?? 'application/json');
    ctx.body = bytes;
  }

  private upstreamHeaders(ctx: GatewayContext): string[] {
    const headers: string[] = [];
    const raw = ctx.req.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      if (PASSED_HEADERS.has(raw[i]!.toLowerCase())) headers.push(raw[i]!, raw[i + 1]!);
    }
    if (this.settings.token !== undefined) headers.push('authorization', `Bearer ${this.settings.token}`);
    return headers;
  }

  /** The runner went silent mid-answer for the idle timeout. */
  private silentMessage(): string {
    return `the remote runner at ${this.shownUrl} stopped sending its answer for ${this.settings.idleTimeoutMs} ms`;
  }

  private failureMessage(err: unknown): string {
    const code = errorCode(err);
    const at = `the remote runner at ${this.shownUrl}`;
    if (code === 'UND_ERR_HEADERS_TIMEOUT') return `${at} did not answer within ${this.settings.firstByteTimeoutMs} ms`;
    if (code === 'UND_ERR_CONNECT_TIMEOUT') return `${at} did not accept a connection within ${this.settings.connectTimeoutMs} ms`;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') {
      return `${at} could not be reached: ${oneLine(causeOf(err))}`;
    }
    return `${at} failed: ${oneLine(causeOf(err))}`;
  }
}

/**
 * The whole JSON answer, at most `MAX_UPSTREAM_JSON_BYTES` (a silent runner is ended by the idle
 * timeout), counted in `bodies` while it comes: let go there, it is dropped and a `BadUpstream`.
 */
async function readJson(body: AsyncIterable<Buffer> & { destroy(err?: Error): void }, bodies: ReadingBodies): Promise<Buffer> {
  // Joined into one buffer as it comes: what is counted is what it costs, however small its chunks.
  const answer = new GrowingBody(MAX_UPSTREAM_JSON_BYTES);
  let letGo = false;
  const reading = bodies.begin('answer', () => {
    letGo = true;
    answer.clear();
    body.destroy(new Error(LET_GO));
  });
  try {
    for await (const chunk of body) {
      if (answer.length + chunk.length > MAX_UPSTREAM_JSON_BYTES) {
        body.destroy();
        throw new BadUpstream(`the remote runner's answer is over ${MAX_UPSTREAM_JSON_BYTES} bytes`);
      }
      if (!bodies.holds(reading, answer.capacityWith(chunk))) break;
      answer.add(chunk);
    }
  } catch (err) {
    throw letGo ? new BadUpstream(letGoMessage(bodies)) : err;
  } finally {
    bodies.end(reading);
  }
  if (letGo) throw new BadUpstream(letGoMessage(bodies));
  return answer.bytes();
}

const LET_GO = 'let go to make room for the other bodies being read';

/** Why a runner's answer (or event) was dropped partway: `ReadingBodies` let it go. */
export function letGoMessage(bodies: ReadingBodies): string {
  return `the remote runner's answer was let go: the gateway holds ${bodies.maxBytes / 1024 / 1024} MiB of bodies being read or in use, and this answer had gone longest without a byte or no other could be let go`;
}

function badGateway(ctx: GatewayContext, id: RpcId, message: string): void {
  ctx.state.refusal = message;
  ctx.status = 502;
  ctx.body = rpcError(id, INTERNAL_ERROR, message);
}

/** The client has gone: nothing reaches it (Koa writes nothing to a closed socket); the row says why. */
function gone(ctx: GatewayContext): void {
  ctx.state.refusal = 'a2a: the client hung up; the upstream request was aborted';
  ctx.body = null;
  ctx.status = 502;
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function mediaType(contentType: string | undefined): string | undefined {
  return contentType?.split(';', 1)[0]?.trim().toLowerCase();
}

/** The first `code` on the error or its causes (undici wraps socket errors). */
function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
  }
  return (err as { code?: unknown } | undefined)?.code === 'UND_ERR_SOCKET' ? 'UND_ERR_SOCKET' : undefined;
}

function causeOf(err: unknown): unknown {
  let e = err;
  while (e instanceof Error && e.cause instanceof Error && !(e instanceof AggregateError)) e = e.cause;
  if (e instanceof AggregateError && e.errors[0] instanceof Error) return e.errors[0];
  return e;
}
