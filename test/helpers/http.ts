import { request } from 'node:http';
import { createConnection, type Socket } from 'node:net';

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface UnixRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** One HTTP request over the Unix socket, with the body read whole. */
export function unixRequest(socketPath: string, req: UnixRequest = {}): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const r = request(
      { socketPath, method: req.method ?? 'GET', path: req.path ?? '/', headers: req.headers ?? {}, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}

/**
 * A raw keep-alive connection: write bytes, read one response at a time. Lets a test prove that
 * several requests ride the same socket, or send a request Node's client would not (no Host).
 */
export class RawConnection {
  private buffer = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  private closed = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
  }

  static open(socketPath: string): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = createConnection({ path: socketPath });
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(data, (err) => (err ? reject(err) : resolve())));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Reads one response with a Content-Length body (what the gateway sends for JSON). */
  async readResponse(): Promise<HttpResponse> {
    for (;;) {
      const headEnd = this.buffer.indexOf('\r\n\r\n');
      if (headEnd >= 0) {
        const head = this.buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
        const status = Number(head[0]?.split(' ')[1]);
        const headers: Record<string, string> = {};
        for (const line of head.slice(1)) {
          const colon = line.indexOf(':');
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        const length = Number(headers['content-length'] ?? 0);
        if (this.buffer.length >= headEnd + 4 + length) {
          const body = this.buffer.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
          this.buffer = this.buffer.subarray(headEnd + 4 + length);
          return { status, headers, body };
        }
      }
      if (this.closed) throw new Error('connection closed before a whole response arrived');
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
