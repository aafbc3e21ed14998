import { createInterface, type Interface } from 'node:readline';
import { canReadKeys, TypedLines } from './typed-lines.js';

interface Line {
  text: string;
  /** When its first key was typed, on a terminal (`TypedLines`); piped lines have none (always fresh). */
  startedAt: number;
}

interface Waiter {
  resolve: (line: string | undefined) => void;
  urgent: boolean;
  /** Only a line begun after this mark; an older one is skipped (told to `onSkipped`). */
  since: number;
  onSkipped: ((line: string) => void) | undefined;
}

export interface NextOptions {
  /** A prompt the human must answer (served before the other readers, `serve`'s command line). */
  urgent?: boolean;
  /**
   * On a terminal: take only a line whose first key was typed after this mark (`mark()`, read
   * when the prompt appeared); an older line, typed for something else, is skipped and given to
   * `onSkipped`. Piped input is a script, read in order: its lines are never skipped.
   */
  since?: number;
  onSkipped?: (line: string) => void;
}

/**
 * Lines read from an input stream (stdin), handed out one per `next()` in order. Lines that come
 * before anyone asks (piped input) wait for the next prompt. Piped input is first read at the first
 * `next()` (or `mark()`), so a root that never prompts never touches it; a terminal is read (in raw
 * mode) from the queue's creation. `close()` stops
 * reading (the process can then exit with stdin still open). On a terminal the lines are typed
 * key by key (`TypedLines`, raw mode), so each knows when it was begun.
 */
export class LineQueue {
  private rl: Interface | undefined;
  private typed: TypedLines | undefined;
  private readonly lines: Line[] = [];
  private readonly waiters: Waiter[] = [];
  private ended = false;

  constructor(
    private readonly input: NodeJS.ReadableStream,
    /** Where typed keys are echoed on a terminal (default stderr). */
    private readonly echo: NodeJS.WritableStream = process.stderr,
  ) {
    // A terminal is read key by key from now on: a line typed before raw mode began would reach us
    // whole, with no way to tell when its keys were typed.
    if (canReadKeys(input)) this.open();
  }

  /** The moment, for `next({since})`: a line begun after it was typed after it. Piped input: 0. */
  mark(): number {
    this.open();
    return this.typed?.mark() ?? 0;
  }

  /** Whether the input is a terminal read key by key: a person types there, and a prompt has a guard time. */
  get readsKeys(): boolean {
    this.open();
    return this.typed !== undefined;
  }

  /**
   * On a terminal, a prompt's guard time: every key from now until the returned release is
   * dropped (the line in progress and the lines typed but not yet read too), so that nothing
   * typed before the prompt appeared, or as it appeared, answers it. The release says whether any
   * key was dropped. Piped input is never dropped (a script, read in order): the release says no.
   */
  hold(): () => boolean {
    this.open();
    if (!this.typed) return () => false;
    const release = this.typed.hold();
    let unread = this.lines.splice(0).length > 0;
    return () => {
      const dropped = release() || unread;
      unread = false;
      return dropped;
    };
  }

  /**
   * The next line, or undefined once the input has ended (or the queue is closed). Aborting
   * `signal` gives up the wait, taking no line. An `urgent` reader is served before the readers
   * already waiting, so one queue can feed both.
   */
  next(signal?: AbortSignal, options: NextOptions = {}): Promise<string | undefined> {
    this.open();
    const since = options.since ?? -1;
    for (;;) {
      const line = this.lines.shift();
      if (line === undefined) break;
      if (line.startedAt > since) return Promise.resolve(line.text);
      options.onSkipped?.(line.text);
    }
    if (this.ended) return Promise.resolve(undefined);
    if (signal?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve: (value) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(value);
        },
        urgent: options.urgent === true,
        since,
        onSkipped: options.onSkipped,
      };
      const onAbort = (): void => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        resolve(undefined);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (waiter.urgent) this.waiters.splice(this.waiters.filter((w) => w.urgent).length, 0, waiter);
      else this.waiters.push(waiter);
    });
  }

  close(): void {
    this.end();
    this.rl?.close();
    this.rl = undefined;
    this.typed?.close();
    this.typed = undefined;
  }

  private open(): void {
    if (this.rl || this.typed || this.ended) return;
    if (canReadKeys(this.input)) {
      this.typed = new TypedLines(this.input, this.echo, (line) => this.arrived(line), () => this.end());
      return;
    }
    this.rl = createInterface({ input: this.input, terminal: false, crlfDelay: Infinity });
    this.rl.on('line', (text) => this.arrived({ text, startedAt: Number.POSITIVE_INFINITY }));
    this.rl.on('close', () => this.end());
  }

  /**
   * A line goes to the first urgent waiter (a prompt) that takes it: one waiting since before the
   * line was begun. A line begun before every waiting prompt appeared is no answer to any: it is
   * reported as skipped to the first, and is not a command either. With no prompt waiting it goes
   * to the first other reader, or waits in the queue.
   */
  private arrived(line: Line): void {
    const urgent = this.waiters.filter((w) => w.urgent);
    const taker = urgent.find((w) => line.startedAt > w.since) ?? (urgent.length === 0 ? this.waiters[0] : undefined);
    if (taker) {
      this.waiters.splice(this.waiters.indexOf(taker), 1);
      taker.resolve(line.text);
      return;
    }
    if (urgent.length > 0) urgent[0]!.onSkipped?.(line.text);
    else this.lines.push(line);
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const waiter of this.waiters.splice(0)) waiter.resolve(undefined);
  }
}
