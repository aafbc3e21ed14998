import { Agent, request, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

/** The `fetch` shape the MCP SDK's transports take. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Statuses whose response has no body (a `Response` refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` whose every request goes over the Unix socket at `socketPath` (the URL gives the path
 * and the Host header only), through `node:http` with a kept-alive agent: the gateway has no TCP
 * listener. Bodies are strings or bytes (what the MCP client sends); the response body streams.
 * Aborting `init.signal` ends the request, or the body being read, with the signal's reason.
 */
export function unixSocketFetch(socketPath: string): { fetch: FetchLike; close: () => void } {
  const agent = new Agent({ keepAlive: true });
  const fetchOverSocket: FetchLike = (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(String(input));
      const signal = init.signal ?? undefined;
      if (signal?.aborted) return reject(signal.reason);
      let body: string | Uint8Array | undefined;
      try {
        body = bodyOf(init.body);
      } catch (err) {
        return reject(err);
      }
      const headers: Record<string, string> = { host: url.host };
      new Headers(init.headers).forEach((value, name) => (headers[name] = value));
      const method = (init.method ?? 'GET').toUpperCase();
      const req = request({ socketPath, agent, method, path: `${url.pathname}${url.search}`, headers });
      const onAbort = () => req.destroy(signal?.reason instanceof Error ? signal.reason : new Error(String(signal?.reason)));
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => signal?.removeEventListener('abort', onAbort);
      req.on('error', (err) => {
        done();
        reject(signal?.aborted ? signal.reason : new TypeError(`fetch over ${socketPath} failed: ${err.message}`, { cause: err }));
      });
      req.on('response', (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        const responseHeaders = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) responseHeaders.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        res.on('close', done);
        if (NULL_BODY.has(status) || method === 'HEAD') {
          res.resume();
          resolve(new Response(null, { status, statusText: res.statusMessage ?? '', headers: responseHeaders }));
          return;
        }
        const stream = Readable.toWeb(res) as NodeReadableStream<Uint8Array> as unknown as ReadableStream<Uint8Array>;
        resolve(new Response(stream, { status, statusText: res.statusMessage ?? '', headers: responseHeaders }));
      });
      req.end(body);
    });
  return { fetch: fetchOverSocket, close: () => agent.destroy() };
}

function bodyOf(body: RequestInit['body']): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (body instanceof URLSearchParams) return body.toString();
  throw new TypeError('fetch over a Unix socket: only string and byte bodies are supported');
}
