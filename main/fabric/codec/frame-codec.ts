import { isUtf8 } from 'node:buffer';
import { FROM_BROKER, FROM_WORKER, type Direction } from '../wire/direction.js';
import type { BrokerMessage } from '../wire/broker-to-worker.js';
import type { ErrorFrame, ResultFrame } from '../wire/envelope.js';
import { MAX_FRAME_BYTES } from '../wire/sizes.js';
import type { WireError } from '../wire/wire-error.js';
import type { WorkerMessage } from '../wire/worker-to-broker.js';
import { DropLog } from './drop-log.js';
import { IdTable, type ReadonlyIdTable } from './id-table.js';
import { decodeFrameText, encodeFrame } from './frame-text.js';
import { requestLine } from './frame-too-large.js';
import { LineSplitter } from './line-splitter.js';

/** What one line from the peer amounts to. A `close` is final: the codec reads nothing after it. */
export type Incoming<M> =
  | { type: 'message'; frame: M }
  | { type: 'result'; frame: ResultFrame; method: string }
  | { type: 'error'; frame: ErrorFrame; method: string }
  | { type: 'dropped'; reason: string }
  | { type: 'close'; reason: string };

export interface FrameCodecOptions {
  /** The longest line read (default `MAX_FRAME_BYTES`). */
  maxFrameBytes?: number;
  /**
   * The longest line the peer reads: a request over it throws `FrameTooLargeError` and is not sent
   * (the peer would close the connection for it). Default: not checked.
   */
  peerMaxFrameBytes?: number;
  /** Where dropped frames are logged (1st, 2nd, 4th, 8th…). */
  log?: (message: string) => void;
}

type Body<F> = F extends unknown ? Omit<F, 'v' | 'id'> : never;
type Requests<M> = Extract<M, { id: number }>;
type Notifications<M> = Exclude<M, { id: number }>;
type Named = { method: string; id?: number; params?: unknown };

/**
 * One per connection, on either end: bytes in, frames out (split, UTF-8, duplicate keys, the
 * direction's schema, id rules), and frames in, text out. It tracks both sides' requests in flight:
 * its own (a result, an error, `task.event` or `req.progress` must name one) and the peer's (a reused
 * in-flight id is fatal; `req.cancel` must name one). Nothing the peer sends can throw out of it.
 */
export class FrameCodec<In extends Named, Out extends Named> {
  /** The broker's codec: reads what a worker may send, its first frame must be `session.hello`. */
  static forBroker(options: FrameCodecOptions = {}): FrameCodec<WorkerMessage, BrokerMessage> {
    return new FrameCodec<WorkerMessage, BrokerMessage>(FROM_WORKER, true, options);
  }

  /** The worker's codec: reads what a broker may send. */
  static forWorker(options: FrameCodecOptions = {}): FrameCodec<BrokerMessage, WorkerMessage> {
    return new FrameCodec<BrokerMessage, WorkerMessage>(FROM_BROKER, false, options);
  }

  private readonly splitter: LineSplitter;
  private readonly drops: DropLog;
  /** Our requests the peer has not answered: id → method. */
  private readonly own = new IdTable<string>();
  /** The peer's requests we have not answered: id → method. */
  private readonly peer = new IdTable<string>();
  /** The method of our request `id` in flight (what a result's payload is checked against); made once, not per line. */
  private readonly ownMethod = (id: number): string | undefined => this.own.get(id);
  private lastId = 0;
  private awaitingHello: boolean;
  private closedFor: string | undefined;
  readonly maxFrameBytes: number;
  readonly peerMaxFrameBytes: number;

  constructor(
    private readonly direction: Direction<In>,
    expectHello: boolean,
    options: FrameCodecOptions = {},
  ) {
    this.maxFrameBytes = options.maxFrameBytes ?? MAX_FRAME_BYTES;
    this.peerMaxFrameBytes = options.peerMaxFrameBytes ?? Infinity;
    this.splitter = new LineSplitter(this.maxFrameBytes);
    this.drops = new DropLog(options.log ?? ((message) => console.warn(`fabric: ${message}`)));
    this.awaitingHello = expectHello;
  }

  /** Why the codec closed, once it has. */
  get closeReason(): string | undefined {
    return this.closedFor;
  }

  get dropped(): number {
    return this.drops.dropped;
  }

  /** Our requests still in flight (id → method). */
  get ownInFlight(): ReadonlyIdTable<string> {
    return this.own;
  }

  /** The peer's requests still in flight (id → method). */
  get peerInFlight(): ReadonlyIdTable<string> {
    return this.peer;
  }

  /** Feeds bytes from the peer; returns what each complete line amounted to, in order. */
  push(chunk: Buffer): Incoming<In>[] {
    if (this.closedFor !== undefined) return [];
    const { blocks, oversized } = this.splitter.push(chunk);
    const out: Incoming<In>[] = [];
    for (const block of blocks) {
      if (!this.pushBlock(block, out)) return out;
    }
    if (oversized) out.push(this.close(`a line over ${this.maxFrameBytes} bytes`));
    return out;
  }

  /** Decodes a block of whole lines; false once the codec has closed. */
  private pushBlock(block: Buffer, out: Incoming<In>[]): boolean {
    if (!isUtf8(block)) {
      // Somewhere in here a line is not UTF-8: take the lines one by one so the good ones before it count.
      let from = 0;
      while (from < block.length) {
        const nl = block.indexOf(0x0a, from);
        const incoming = this.decodeLine(block.subarray(from, nl));
        out.push(incoming);
        if (incoming.type === 'close') return false;
        from = nl + 1;
      }
      return true;
    }
    const text = block.toString('utf8');
    let from = 0;
    while (from < text.length) {
      const nl = text.indexOf('\n', from);
      const incoming = this.decodeLine(text.slice(from, nl));
      out.push(incoming);
      if (incoming.type === 'close') return false;
      from = nl + 1;
    }
    return true;
  }

  /** Decodes one line (without its newline) and applies the id and hello rules. */
  decodeLine(line: Buffer | string): Incoming<In> {
    if (this.closedFor !== undefined) return { type: 'close', reason: this.closedFor };
    try {
      if (typeof line !== 'string' && !isUtf8(line)) return this.close('a line that is not UTF-8');
      return this.admit(typeof line === 'string' ? line : line.toString('utf8'));
    } catch (err) {
      return this.close(`undecodable line (${(err as Error).message})`);
    }
  }

  /** Marks the codec closed (the connection is going away) and says why. */
  close(reason: string): { type: 'close'; reason: string } {
    this.closedFor ??= reason;
    return { type: 'close', reason: this.closedFor };
  }

  private admit(text: string): Incoming<In> {
    const decoded = decodeFrameText(text, this.direction, this.ownMethod);
    switch (decoded.type) {
      case 'invalid':
        return this.close(`decode error: ${decoded.reason}`);
      case 'orphan':
        return this.drop(`a result for id ${decoded.id}, which is not in flight`);
      case 'result':
        this.own.delete(decoded.frame.id);
        return decoded;
      case 'error': {
        const method = this.own.get(decoded.frame.id);
        if (method === undefined) return this.drop(`an error for id ${decoded.frame.id}, which is not in flight`);
        this.own.delete(decoded.frame.id);
        return { type: 'error', frame: decoded.frame, method };
      }
      case 'message':
        return this.admitMessage(decoded.frame);
    }
  }

  private admitMessage(frame: In): Incoming<In> {
    const hello = frame.method === 'session.hello';
    if (this.awaitingHello) {
      if (!hello) return this.close(`the first frame is ${frame.method}, not session.hello`);
      this.awaitingHello = false;
    } else if (hello) {
      return this.close('a second session.hello');
    }
    if (frame.id !== undefined) {
      if (this.peer.has(frame.id)) return this.close(`request id ${frame.id} reused while still in flight`);
      this.peer.set(frame.id, frame.method);
      return { type: 'message', frame };
    }
    const named = (frame.params as { id: number }).id;
    if (frame.method === 'req.cancel') {
      if (!this.peer.has(named)) return this.drop(`req.cancel of id ${named}, which is not in flight`);
    } else if (!this.own.has(named) || (frame.method === 'task.event' && this.own.get(named) !== 'task.run')) {
      return this.drop(`${frame.method} for id ${named}, which is not in flight`);
    }
    return { type: 'message', frame };
  }

  private drop(reason: string): { type: 'dropped'; reason: string } {
    this.drops.drop(reason);
    return { type: 'dropped', reason };
  }

  /**
   * Encodes one of our requests under the next id; it is in flight until the peer answers. A
   * request that cannot be encoded, or whose line is over `peerMaxFrameBytes` (`FrameTooLargeError`),
   * throws and never went out: its id is neither in flight nor used.
   */
  request<F extends Requests<Out>>(body: Body<F>): { id: number; line: string } {
    const id = this.lastId + 1;
    const line = requestLine(id, body.method, body.params, this.peerMaxFrameBytes);
    this.lastId = id;
    this.own.set(id, body.method);
    return { id, line };
  }

  /**
   * Stops awaiting our request `id` (a task the broker ended itself, a relayed question withdrawn):
   * the peer's late answer, and a late `task.event` for it, are then dropped as naming nothing in
   * flight, instead of kept track of for as long as the connection lives.
   */
  forget(id: number): void {
    this.own.delete(id);
  }

  /** Encodes a notification. */
  notify(body: Body<Notifications<Out>>): string {
    return encodeFrame({ v: 3, method: body.method, params: body.params });
  }

  /**
   * Encodes the result of the peer's request `id`, which stops being in flight. An `undefined`
   * result is sent as `null` (a frame with no `result` would be no frame at all). If the result
   * cannot be encoded (a cycle, a BigInt) this throws and `id` stays in flight, to be failed.
   */
  respond(id: number, result: unknown): string {
    this.answering(id);
    const line = encodeFrame({ v: 3, id, result: result === undefined ? null : result });
    this.peer.delete(id);
    return line;
  }

  /** Encodes an error answering the peer's request `id`, which stops being in flight. */
  fail(id: number, error: WireError): string {
    this.answering(id);
    const line = encodeFrame({ v: 3, id, error });
    this.peer.delete(id);
    return line;
  }

  private answering(id: number): void {
    if (!this.peer.has(id)) throw new Error(`fabric: answering id ${id}, which the peer does not have in flight`);
  }
}
