/**
 * What all bodies the gateway is still reading may hold together: clients' request bodies, and
 * the remote runner's answers (a JSON answer read whole, an event not yet whole). Each has its own
 * cap (10 MiB a request, 32 MiB an answer or an event), but each is held while it comes, and a
 * token holder picks how many connections send one: 512 connections each 10 MiB short of a byte
 * held 5 GiB of the gateway (Electron's main process) until the 60 s request timeout, and a
 * runner stalling 32 MiB into each of 512 answers 16 GiB for its 5 min idle timeout.
 */
export const MAX_READING_BODY_BYTES = 64 * 1024 * 1024;

/** One body being read: what it holds, when its sender last sent a byte, and how to let it go. */
export interface ReadingBody {
  bytes: number;
  sentAt: number;
  /** Drops what the body holds and refuses or ends its exchange; called at most once, by `holds`. */
  readonly letGo: () => void;
}

/**
 * One ledger of the bytes every body holds while it is read. Before a body holds more, room is
 * made: while all bodies together would hold more than the cap, the body whose sender has gone
 * longest without sending is let go. The body growing has just been sent to, so it is never chosen
 * while another holds bytes: the bodies hold at most the cap plus one chunk. Never chosen by size:
 * a large body arriving fast is not a stalled one.
 */
export class ReadingBodies {
  private readonly reading = new Set<ReadingBody>();
  private total = 0;

  constructor(readonly maxBytes: number = MAX_READING_BODY_BYTES) {}

  /** Bytes held by the bodies being read, all together. */
  get bytes(): number {
    return this.total;
  }

  /** Follows a body from before its first byte; `end` it once it is read (or given up). */
  begin(letGo: () => void): ReadingBody {
    const body: ReadingBody = { bytes: 0, sentAt: performance.now(), letGo };
    this.reading.add(body);
    return body;
  }

  /**
   * Bytes came for `body`, which now holds `bytes` (more than before: room is made for the
   * difference first, letting the stalest others go; less: it handed some on).
   */
  holds(body: ReadingBody, bytes: number): void {
    if (!this.reading.has(body)) return;
    body.sentAt = performance.now();
    while (this.total + bytes - body.bytes > this.maxBytes) {
      let stalest: ReadingBody | undefined;
      for (const other of this.reading) {
        if (other !== body && other.bytes > 0 && other.sentAt < (stalest?.sentAt ?? Infinity)) stalest = other;
      }
      if (!stalest) break;
      this.end(stalest);
      stalest.letGo();
    }
    this.total += bytes - body.bytes;
    body.bytes = bytes;
  }

  /** The body is read, refused or gone: its bytes are no longer counted here. */
  end(body: ReadingBody): void {
    if (!this.reading.delete(body)) return;
    this.total -= body.bytes;
    body.bytes = 0;
  }
}
