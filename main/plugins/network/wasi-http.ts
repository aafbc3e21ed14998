/**
 * `wasi:http/types` and `wasi:http/outgoing-handler` (0.2), as jco expects them, for the guest's
 * `fetch` (componentize-js maps it onto these). preview2-shim's own implementation performs the
 * request in its I/O thread by host name, out of our reach; this one hands each request, whole,
 * to `send`, which checks it against the allow-list and performs it in the fetch thread.
 *
 * The guest's call is synchronous WebAssembly: `send` blocks this worker until the answer is in,
 * so one request runs at a time and its response is ready by the time the guest polls for it.
 * Results follow jco's convention: a returned value is `ok`, a thrown `{ tag, val }` is `err`.
 */
import type { ErrorCode, NetworkAnswer, NetworkRequest } from './exchange.js';

/** The preview2-shim classes our resources must be (jco checks `instanceof` on what we return). */
export interface ShimIo {
  InputStream: new () => object;
  OutputStream: new () => object;
  /** A pollable that is ready at once. */
  readyPollable(): object;
}

export interface WasiHttpHost {
  /** Checks and performs one request; never throws. */
  send(request: NetworkRequest): NetworkAnswer;
  /** Refusal before anything is sent (no network granted, a host not on the list), or null. */
  refuse(method: string, url: string): { error: ErrorCode; message: string } | null;
  /** The most the guest may send as a request body. */
  maxRequestBodyBytes: number;
  /** Refuses a request whose body went past `maxRequestBodyBytes` (nothing is sent). */
  refuseBody(method: string, url: string, bytes: number): ErrorCode;
}

/** Headers a guest may not set (as preview2-shim): the host sets the connection's own. */
const FORBIDDEN_HEADERS = new Set(['connection', 'keep-alive', 'host']);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

type Method = { tag: string; val?: string };
type Scheme = { tag: 'HTTP' | 'HTTPS' | 'other'; val?: string };

const headerError = (tag: 'invalid-syntax' | 'forbidden' | 'immutable'): { tag: string } => ({ tag });

export function wasiHttp(io: ShimIo, host: WasiHttpHost): Record<string, Record<string, unknown>> {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();

  class Fields {
    #entries: [string, Uint8Array][] = [];
    #immutable = false;
    static fromList(entries: [string, Uint8Array][]): Fields {
      const fields = new Fields();
      for (const [name, value] of entries) fields.append(name, value);
      return fields;
    }
    /** Response headers: kept as the server sent them, read-only. */
    static _locked(entries: [string, Uint8Array][]): Fields {
      const fields = new Fields();
      fields.#entries = entries;
      fields.#immutable = true;
      return fields;
    }
    static _lock(fields: Fields): Fields {
      fields.#immutable = true;
      return fields;
    }
    get(name: string): Uint8Array[] {
      const key = name.toLowerCase();
      return this.#entries.filter(([n]) => n.toLowerCase() === key).map(([, v]) => v);
    }
    has(name: string): boolean {
      return this.get(name).length > 0;
    }
    set(name: string, values: Uint8Array[]): void {
      this.#check(name, values);
      const key = name.toLowerCase();
      this.#entries = this.#entries.filter(([n]) => n.toLowerCase() !== key);
      for (const value of values) this.#entries.push([name, value]);
    }
    delete(name: string): void {
      if (this.#immutable) throw headerError('immutable');
      const key = name.toLowerCase();
      this.#entries = this.#entries.filter(([n]) => n.toLowerCase() !== key);
    }
    append(name: string, value: Uint8Array): void {
      this.#check(name, [value]);
      this.#entries.push([name, value]);
    }
    entries(): [string, Uint8Array][] {
      return this.#entries.map(([n, v]) => [n, v]);
    }
    clone(): Fields {
      const fields = new Fields();
      fields.#entries = this.entries();
      return fields;
    }
    #check(name: string, values: Uint8Array[]): void {
      if (this.#immutable) throw headerError('immutable');
      if (!TOKEN.test(name)) throw headerError('invalid-syntax');
      for (const value of values) if (value.some((b) => b === 0 || b === 10 || b === 13)) throw headerError('invalid-syntax');
      if (FORBIDDEN_HEADERS.has(name.toLowerCase())) throw headerError('forbidden');
    }
  }

  /** The guest's request body, gathered in memory up to its cap. */
  class BodySink extends io.OutputStream {
    chunks: Uint8Array[] = [];
    bytes = 0;
    tooLarge = false;
    checkWrite(): bigint {
      return 65536n;
    }
    write(buf: Uint8Array): void {
      this.bytes += buf.length;
      if (this.bytes > host.maxRequestBodyBytes) {
        this.tooLarge = true;
        return;
      }
      this.chunks.push(buf.slice());
    }
    blockingWriteAndFlush(buf: Uint8Array): void {
      this.write(buf);
    }
    flush(): void {}
    blockingFlush(): void {}
    subscribe(): object {
      return io.readyPollable();
    }
    splice(): never {
      throw { tag: 'closed' };
    }
    blockingSplice(): never {
      throw { tag: 'closed' };
    }
    writeZeroes(len: bigint): void {
      // Counted before anything is allocated: a guest's 2^40 zeroes must not become a host buffer.
      if (this.bytes + Number(len) > host.maxRequestBodyBytes) {
        this.bytes += Number(len);
        this.tooLarge = true;
        return;
      }
      this.write(new Uint8Array(Number(len)));
    }
    blockingWriteZeroesAndFlush(len: bigint): void {
      this.writeZeroes(len);
    }
  }

  class OutgoingBody {
    sink = new BodySink();
    #taken = false;
    finished = false;
    write(): object {
      if (this.#taken) throw undefined;
      this.#taken = true;
      return this.sink;
    }
    static finish(body: OutgoingBody, trailers: Fields | undefined): void {
      if (trailers) throw { tag: 'internal-error', val: 'trailers are not supported' } satisfies ErrorCode;
      body.finished = true; // a body over its cap is refused when the request would be sent
    }
  }

  class RequestOptions {
    #connect: bigint | undefined;
    #firstByte: bigint | undefined;
    #betweenBytes: bigint | undefined;
    connectTimeout(): bigint | undefined {
      return this.#connect;
    }
    setConnectTimeout(d: bigint | undefined): void {
      this.#connect = d;
    }
    firstByteTimeout(): bigint | undefined {
      return this.#firstByte;
    }
    setFirstByteTimeout(d: bigint | undefined): void {
      this.#firstByte = d;
    }
    betweenBytesTimeout(): bigint | undefined {
      return this.#betweenBytes;
    }
    setBetweenBytesTimeout(d: bigint | undefined): void {
      this.#betweenBytes = d;
    }
  }

  class OutgoingRequest {
    #method: Method = { tag: 'get' };
    #scheme: Scheme | undefined;
    #authority: string | undefined;
    #path: string | undefined;
    #headers: Fields;
    #body = new OutgoingBody();
    #bodyTaken = false;
    constructor(headers: Fields) {
      this.#headers = Fields._lock(headers);
    }
    body(): OutgoingBody {
      if (this.#bodyTaken) throw undefined;
      this.#bodyTaken = true;
      return this.#body;
    }
    method(): Method {
      return this.#method;
    }
    setMethod(method: Method): void {
      if (method.tag === 'other' && !TOKEN.test(method.val ?? '')) throw undefined;
      this.#method = method;
    }
    pathWithQuery(): string | undefined {
      return this.#path;
    }
    setPathWithQuery(path: string | undefined): void {
      if (path !== undefined && !/^[\x21-\x7e]*$/.test(path)) throw undefined;
      this.#path = path;
    }
    scheme(): Scheme | undefined {
      return this.#scheme;
    }
    setScheme(scheme: Scheme | undefined): void {
      if (scheme?.tag === 'other' && !/^[a-zA-Z][a-zA-Z0-9+.-]*$/.test(scheme.val ?? '')) throw undefined;
      this.#scheme = scheme;
    }
    authority(): string | undefined {
      return this.#authority;
    }
    setAuthority(authority: string | undefined): void {
      if (authority !== undefined && !/^[\x21-\x7e]*$/.test(authority)) throw undefined;
      this.#authority = authority;
    }
    headers(): Fields {
      return this.#headers;
    }
    static _parts(r: OutgoingRequest): { method: string; url: string; headers: Fields; body: OutgoingBody; bodyTaken: boolean } {
      const scheme = r.#scheme === undefined ? 'https' : r.#scheme.tag === 'other' ? r.#scheme.val! : r.#scheme.tag.toLowerCase();
      const method = r.#method.tag === 'other' ? r.#method.val! : r.#method.tag.toUpperCase();
      return { method, url: `${scheme}://${r.#authority ?? ''}${r.#path ?? '/'}`, headers: r.#headers, body: r.#body, bodyTaken: r.#bodyTaken };
    }
  }

  /** A response body already in memory, read by the guest as an input-stream. */
  class BodySource extends io.InputStream {
    #body: Uint8Array;
    #at = 0;
    constructor(body: Uint8Array) {
      super();
      this.#body = body;
    }
    read(len: bigint): Uint8Array {
      if (this.#at >= this.#body.length) throw { tag: 'closed' };
      const end = Math.min(this.#body.length, this.#at + Number(len));
      const chunk = this.#body.slice(this.#at, end);
      this.#at = end;
      return chunk;
    }
    blockingRead(len: bigint): Uint8Array {
      return this.read(len);
    }
    skip(len: bigint): bigint {
      if (this.#at >= this.#body.length) throw { tag: 'closed' };
      const end = Math.min(this.#body.length, this.#at + Number(len));
      const skipped = end - this.#at;
      this.#at = end;
      return BigInt(skipped);
    }
    blockingSkip(len: bigint): bigint {
      return this.skip(len);
    }
    subscribe(): object {
      return io.readyPollable();
    }
  }

  class FutureTrailers {
    #taken = false;
    subscribe(): object {
      return io.readyPollable();
    }
    get(): unknown {
      if (this.#taken) return { tag: 'err', val: undefined };
      this.#taken = true;
      return { tag: 'ok', val: { tag: 'ok', val: undefined } };
    }
  }

  class IncomingBody {
    #stream: BodySource | undefined;
    constructor(body: Uint8Array) {
      this.#stream = new BodySource(body);
    }
    stream(): BodySource {
      const stream = this.#stream;
      if (!stream) throw undefined;
      this.#stream = undefined;
      return stream;
    }
    static finish(_body: IncomingBody): FutureTrailers {
      return new FutureTrailers();
    }
  }

  class IncomingResponse {
    #status: number;
    #headers: Fields;
    #body: IncomingBody | undefined;
    constructor(status: number, headers: Fields, body: Uint8Array) {
      this.#status = status;
      this.#headers = headers;
      this.#body = new IncomingBody(body);
    }
    status(): number {
      return this.#status;
    }
    headers(): Fields {
      return this.#headers;
    }
    consume(): IncomingBody {
      const body = this.#body;
      if (!body) throw undefined;
      this.#body = undefined;
      return body;
    }
  }

  /**
   * The answer to one request. The request is sent when the guest first waits for it (its body is
   * finished by then, or was never opened); while the guest is still writing a body, waiting
   * says "not yet".
   */
  class FutureIncomingResponse {
    #request: OutgoingRequest;
    #answer: { tag: 'ok'; val: IncomingResponse } | { tag: 'err'; val: ErrorCode } | undefined;
    #taken = false;
    constructor(request: OutgoingRequest, refused: ErrorCode | undefined) {
      this.#request = request;
      if (refused) this.#answer = { tag: 'err', val: refused };
    }
    subscribe(): object {
      this.#settle();
      return io.readyPollable();
    }
    get(): unknown {
      if (this.#taken) return { tag: 'err', val: undefined };
      this.#settle();
      if (!this.#answer) return undefined;
      this.#taken = true;
      return { tag: 'ok', val: this.#answer };
    }
    #settle(): void {
      if (this.#answer) return;
      const parts = OutgoingRequest._parts(this.#request);
      if (parts.bodyTaken && !parts.body.finished) return; // the guest is still writing it
      const sink = parts.body.sink;
      if (sink.tooLarge) {
        this.#answer = { tag: 'err', val: host.refuseBody(parts.method, parts.url, sink.bytes) };
        return;
      }
      const body = sink.chunks.length === 0 ? null : Buffer.concat(sink.chunks);
      const headers = parts.headers.entries().map(([n, v]): [string, string] => [n, decoder.decode(v)]);
      const answer = host.send({ method: parts.method, url: parts.url, headers, body });
      if (!answer.ok) {
        this.#answer = { tag: 'err', val: answer.error };
        return;
      }
      const fields = Fields._locked(answer.headers.map(([n, v]): [string, Uint8Array] => [n, encoder.encode(v)]));
      this.#answer = { tag: 'ok', val: new IncomingResponse(answer.status, fields, answer.body) };
    }
  }

  const types = {
    Fields,
    FutureIncomingResponse,
    FutureTrailers,
    IncomingBody,
    IncomingRequest: class IncomingRequest {},
    IncomingResponse,
    OutgoingBody,
    OutgoingRequest,
    OutgoingResponse: class OutgoingResponse {},
    ResponseOutparam: class ResponseOutparam {},
    RequestOptions,
    httpErrorCode(): undefined {
      return undefined;
    },
  };
  const outgoingHandler = {
    handle(request: OutgoingRequest, _options: RequestOptions | undefined): FutureIncomingResponse {
      const { method, url } = OutgoingRequest._parts(request);
      // A refusal is the response's error, not handle's: the guest's fetch then rejects the same
      // way for every refusal (handle's own error comes out as an opaque "host API" error).
      return new FutureIncomingResponse(request, host.refuse(method, url)?.error);
    },
  };
  return { 'wasi:http/types': types, 'wasi:http/outgoing-handler': outgoingHandler };
}
