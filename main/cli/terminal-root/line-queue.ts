import { createInterface, type Interface } from 'node:readline';

/**
 * Lines read from an input stream (stdin), handed out one per `next()` in order. Lines that come
 * before anyone asks (piped input) wait for the next prompt. The input is first read at the first
 * `next()`, so a root that never prompts never touches stdin. `close()` stops reading (the process
 * can then exit with stdin still open).
 */
export class LineQueue {
  private rl: Interface | undefined;
  private readonly lines: string[] = [];
  private readonly waiters: ((line: string | undefined) => void)[] = [];
  private readonly urgent = new WeakSet<(line: string | undefined) => void>();
  private ended = false;

  constructor(private readonly input: NodeJS.ReadableStream) {}

  /**
   * The next line, or undefined once the input has ended (or the queue is closed). Aborting
   * `signal` gives up the wait, taking no line. An `urgent` reader (a prompt the human must answer)
   * is served before the readers already waiting (`serve`'s command line, say), so one queue can
   * feed both.
   */
  next(signal?: AbortSignal, options: { urgent?: boolean } = {}): Promise<string | undefined> {
    this.open();
    const line = this.lines.shift();
    if (line !== undefined || this.ended) return Promise.resolve(line);
    if (signal?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter = (value: string | undefined): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const onAbort = (): void => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        resolve(undefined);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (options.urgent) this.waiters.splice(this.urgentCount(), 0, waiter);
      else this.waiters.push(waiter);
      if (options.urgent) this.urgent.add(waiter);
    });
  }

  /** How many urgent readers wait at the front (they are served in the order they came). */
  private urgentCount(): number {
    let n = 0;
    while (n < this.waiters.length && this.urgent.has(this.waiters[n]!)) n++;
    return n;
  }

  close(): void {
    this.end();
    this.rl?.close();
    this.rl = undefined;
  }

  private open(): void {
    if (this.rl || this.ended) return;
    this.rl = createInterface({ input: this.input, terminal: false, crlfDelay: Infinity });
    this.rl.on('line', (line) => {
      const waiter = this.waiters.shift();
      if (waiter) waiter(line);
      else this.lines.push(line);
    });
    this.rl.on('close', () => this.end());
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }
}
