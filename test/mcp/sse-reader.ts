import { request, type IncomingMessage } from 'node:http';

/** One SSE block as it came: an event (`event`, `data`) or a comment. */
export type SseBlock = { kind: 'event'; event: string; data: string } | { kind: 'comment'; text: string };

/**
 * A raw `GET …/sse` over the Unix socket, read block by block, so a test sees exactly what the
 * gateway writes: the endpoint event, message events and keep-alive comments, in order.
 */
export class SseStream {
  private text = '';
  private readonly blocks: SseBlock[] = [];
  private waiters: (() => void)[] = [];
  private ended = false;

  private constructor(readonly response: IncomingMessage) {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      this.text += chunk;
      let end: number;
      while ((end = this.text.indexOf('\n\n')) >= 0) {
        this.blocks.push(parseBlock(this.text.slice(0, end)));
        this.text = this.text.slice(end + 2);
      }
      this.wake();
    });
    const finish = (): void => {
      this.ended = true;
      this.wake();
    };
    response.on('end', finish);
    response.on('close', finish);
    response.on('error', finish);
  }

  /** Opens the stream; resolves once the response head has arrived (whatever its status). */
  static open(socketPath: string, path: string, headers: Record<string, string>): Promise<SseStream> {
    return new Promise((resolve, reject) => {
      const req = request({ socketPath, path, method: 'GET', headers: { accept: 'text/event-stream', ...headers }, agent: false }, (res) =>
        resolve(new SseStream(res)),
      );
      req.on('error', reject);
      req.end();
    });
  }

  get status(): number {
    return this.response.statusCode ?? 0;
  }

  /** The next block; rejects if the stream ends first. */
  async next(): Promise<SseBlock> {
    for (;;) {
      const block = this.blocks.shift();
      if (block) return block;
      if (this.ended) throw new Error('the SSE stream ended');
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** The next `event`, skipping keep-alive comments. */
  async nextEvent(): Promise<{ event: string; data: string }> {
    for (;;) {
      const block = await this.next();
      if (block.kind === 'event') return block;
    }
  }

  /** Resolves when the server ends the stream (after whatever blocks are still unread). */
  async untilEnded(): Promise<void> {
    while (!this.ended) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** The client goes away: the socket is destroyed. */
  disconnect(): void {
    this.response.destroy();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

function parseBlock(block: string): SseBlock {
  const lines = block.split('\n');
  if (lines.every((l) => l.startsWith(':'))) return { kind: 'comment', text: lines.map((l) => l.slice(1).trim()).join('\n') };
  let event = 'message';
  const data: string[] = [];
  for (const line of lines) {
    if (line.startsWith('event: ')) event = line.slice(7);
    else if (line.startsWith('data: ')) data.push(line.slice(6));
  }
  return { kind: 'event', event, data: data.join('\n') };
}
