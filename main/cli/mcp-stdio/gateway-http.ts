import { Agent, request, type IncomingMessage } from 'node:http';

/**
 * HTTP to the gateway over its Unix socket with the bearer token, on up to `maxConnections`
 * kept-alive connections (one per line the bridge has in flight).
 */
export class GatewayHttp {
  private readonly agent: Agent;

  constructor(
    private readonly socketPath: string,
    private currentToken: string,
    maxConnections = 1,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: maxConnections });
  }

  /** The token requests are sent with now. */
  get token(): string {
    return this.currentToken;
  }

  /** A restarted gateway has a new token; the caller re-reads the file and hands it over. */
  setToken(token: string): void {
    this.currentToken = token;
  }

  /** Resolves with the response once its head has arrived; the body is the caller's to read. Aborting `signal` drops the request and its response. */
  send(method: 'GET' | 'POST', path: string, headers: Readonly<Record<string, string>> = {}, body?: string, signal?: AbortSignal): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          socketPath: this.socketPath,
          agent: this.agent,
          method,
          path,
          // `localhost` passes the gateway's loopback Host check.
          headers: { host: 'localhost', authorization: `Bearer ${this.currentToken}`, ...headers },
          ...(signal !== undefined ? { signal } : {}),
        },
        resolve,
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Closes the kept-alive connection, so nothing holds the process open. */
  close(): void {
    this.agent.destroy();
  }
}

/**
 * The most of one gateway answer the bridge holds (a body, or one event of a stream): the
 * gateway's largest honest answer is a batch of 64 calls at 1 MiB of guest output each, escaped,
 * plus the ids of a 10 MiB body. Past it the answer is dropped as it comes, its ids answered an error.
 */
export const MAX_ANSWER_BYTES = 128 * 1024 * 1024;

/** An answer from the gateway over `MAX_ANSWER_BYTES`: its connection is dropped. */
export class AnswerTooLargeError extends Error {
  override readonly name = 'AnswerTooLargeError';

  constructor(maxBytes: number) {
    super(`the gateway's answer is over ${maxBytes / 1024 / 1024} MiB (${maxBytes} bytes), the most the bridge holds; it was dropped`);
  }
}

/** A response body read whole, as text, up to `maxBytes`. Rejects if the connection fails before it ends, or with AnswerTooLargeError. */
export async function readBody(res: IncomingMessage, maxBytes: number = MAX_ANSWER_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of res) {
    const part = chunk as Buffer;
    bytes += part.length;
    if (bytes > maxBytes) {
      res.destroy();
      throw new AnswerTooLargeError(maxBytes);
    }
    chunks.push(part);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A failed connection, in words: `ECONNREFUSED`, `ENOENT` and the like, with Node's message. */
export function describeFailure(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as NodeJS.ErrnoException).code;
  return code !== undefined && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
}
