import type { ServerResponse } from 'node:http';

/**
 * What all Streamable HTTP answers together may hold unsent (written, not yet taken by their
 * clients). Node has no write timeout: an answer nobody reads stays in the gateway (Electron's
 * main process) for as long as its connection is open, and a client could leave one on each of
 * 512 connections (~10 MiB each from a 10 MiB batch of pings with large ids).
 */
export const MAX_UNSENT_ANSWER_BYTES = 64 * 1024 * 1024;

/** One answer still being sent: when its client was last seen reading. */
interface Unsent {
  /** Its backlog right after it was written, or when last seen smaller: smaller again is reading. */
  backlog: number;
  readAt: number;
}

/**
 * The Streamable HTTP answers not yet sent whole. Before an answer is written, room is made for
 * it: while the answers held and it would pass `MAX_UNSENT_ANSWER_BYTES`, the connection whose
 * answer has gone longest without being read is closed (never chosen by size: a large answer in
 * transit to a client that reads is not a client that stopped). The answer itself is always
 * written, so the gateway holds at most the cap plus one answer.
 */
export class UnsentAnswers {
  private readonly answers = new Map<ServerResponse, Unsent>();

  constructor(private readonly maxBytes: number = MAX_UNSENT_ANSWER_BYTES) {}

  /** Frees room for an answer of `bytes` about to be written on `res`. */
  makeRoom(res: ServerResponse, bytes: number): void {
    if (this.answers.size === 0) return;
    let total = bytes + this.bytes;
    if (total <= this.maxBytes) return;
    const now = performance.now();
    while (total > this.maxBytes) {
      let stalest: ServerResponse | undefined;
      let stalestReadAt = Infinity;
      for (const [other, unsent] of this.answers) {
        if (other === res) continue;
        const readAt = this.readAt(other, unsent, now);
        if (readAt < stalestReadAt) [stalest, stalestReadAt] = [other, readAt];
      }
      if (!stalest) return;
      total -= stalest.writableLength;
      this.answers.delete(stalest);
      stalest.destroy();
    }
  }

  /** Follows `res` once its answer is written, until it is sent whole or its connection closes. */
  written(res: ServerResponse): void {
    if (res.writableLength === 0 || res.writableFinished) return;
    this.answers.set(res, { backlog: res.writableLength, readAt: performance.now() });
    const forget = (): void => {
      this.answers.delete(res);
    };
    res.once('finish', forget);
    res.once('close', forget);
  }

  /** Bytes of answers written and not yet sent, all connections together. */
  get bytes(): number {
    let total = 0;
    for (const res of this.answers.keys()) total += res.writableLength;
    return total;
  }

  private readAt(res: ServerResponse, unsent: Unsent, now: number): number {
    const backlog = res.writableLength;
    if (backlog < unsent.backlog) {
      unsent.backlog = backlog;
      unsent.readAt = now;
    }
    return unsent.readAt;
  }
}
