/**
 * What all bodies the gateway holds may cost together: clients' request bodies while they come
 * and while their request runs, and the remote runner's answers while they come (a JSON answer
 * read whole, an event not yet whole). Each has its own cap (10 MiB a request, 32 MiB an answer or
 * an event), but a token holder picks how many connections send one: 512 connections each 10 MiB
 * short of a byte held 5 GiB of the gateway (Electron's main process) until the 60 s request
 * timeout, and a runner stalling 32 MiB into each of 512 answers 16 GiB for its 5 min idle timeout.
 */
export const MAX_READING_BODY_BYTES = 64 * 1024 * 1024;

/**
 * Whose body: a client's request body (refused 503 when let go, which the client may send again)
 * or the remote runner's answer (a 502 to a task the runner may have already run: let go last).
 */
export type BodyKind = 'request' | 'answer';

/** One body held: what it costs, when its sender last sent a byte, and how to let it go. */
export interface ReadingBody {
  readonly kind: BodyKind;
  bytes: number;
  /** When its sender last sent a byte, as the ledger's tick: only which came first is ever asked. */
  sentAt: number;
  /** Whole and handed to its request, which runs with it: never let go, counted until `end`. */
  inUse: boolean;
  /** Drops what the body holds and refuses or ends its exchange; called at most once, by the ledger. */
  readonly letGo: () => void;
}

/**
 * One ledger of what every body costs while it is read and, for a request body, while its
 * request runs with it. Before a body holds more, room is made by letting others being read go:
 * request bodies before runner answers (a client's 503 can be sent again, a runner's answer is
 * the outcome of work done), within a kind the stalest of those whose release alone makes the room
 * (letting a 35-byte answer go frees nothing), else the stalest. The body growing has just been
 * sent to, so it is chosen only when nothing else can be: a request body never lets an answer go,
 * and bodies in use are never let go, so when they fill the cap a new body is refused itself.
 * Never chosen by size alone: a large body arriving fast is not a stalled one.
 */
export class ReadingBodies {
  private readonly held = new Set<ReadingBody>();
  private total = 0;
  /**
   * The ledger's clock: one more at each body begun or sent to. Staleness is only ever compared
   * (the stalest body goes first), so a counter orders them as the clock did, without a clock
   * read a chunk on every request's path.
   */
  private tick = 0;

  constructor(readonly maxBytes: number = MAX_READING_BODY_BYTES) {}

  /** What the bodies held cost, all together. */
  get bytes(): number {
    return this.total;
  }

  /** Follows a body from before its first byte; `end` it once it is no longer held. */
  begin(kind: BodyKind, letGo: () => void): ReadingBody {
    const body: ReadingBody = { kind, bytes: 0, sentAt: ++this.tick, inUse: false, letGo };
    this.held.add(body);
    return body;
  }

  /**
   * Bytes came for `body`, which now costs `bytes` (more than before: room is made for the
   * difference first, letting others go; less: it handed some on). False when no room could be
   * made: `body` itself is then let go (its `letGo` called) and no longer counted.
   * Calling this can end other exchanges, synchronously.
   */
  holds(body: ReadingBody, bytes: number): boolean {
    if (!this.held.has(body)) return false;
    body.sentAt = ++this.tick;
    return this.grow(body, bytes);
  }

  /**
   * `body` is whole and handed to its request, which costs `bytes` from now on (its bytes, its
   * parsed form): counted, never let go, until `end`. False when no room could be made (the body
   * is then let go, as by `holds`).
   */
  inUse(body: ReadingBody, bytes: number): boolean {
    if (!this.held.has(body)) return false;
    body.inUse = true;
    return this.grow(body, bytes);
  }

  /** The body is answered, refused or gone: it is no longer counted here. */
  end(body: ReadingBody): void {
    if (!this.held.delete(body)) return;
    this.total -= body.bytes;
    body.bytes = 0;
  }

  private grow(body: ReadingBody, bytes: number): boolean {
    while (this.total + bytes - body.bytes > this.maxBytes) {
      const other = this.toLetGo(body, this.total + bytes - body.bytes - this.maxBytes);
      if (other === undefined) {
        if (bytes <= body.bytes) break;
        this.end(body);
        body.letGo();
        return false;
      }
      this.end(other);
      other.letGo();
    }
    this.total += bytes - body.bytes;
    body.bytes = bytes;
    return true;
  }

  /** The body to let go so that `body` may grow by `shortfall`, or none. */
  private toLetGo(body: ReadingBody, shortfall: number): ReadingBody | undefined {
    const kinds: readonly BodyKind[] = body.kind === 'request' ? ['request'] : ['request', 'answer'];
    for (const kind of kinds) {
      let enough: ReadingBody | undefined;
      let stalest: ReadingBody | undefined;
      for (const other of this.held) {
        if (other === body || other.inUse || other.kind !== kind || other.bytes === 0) continue;
        if (other.sentAt < (stalest?.sentAt ?? Infinity)) stalest = other;
        if (other.bytes >= shortfall && other.sentAt < (enough?.sentAt ?? Infinity)) enough = other;
      }
      if (enough ?? stalest) return enough ?? stalest;
    }
    return undefined;
  }
}
