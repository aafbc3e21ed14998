import { HELD_CHUNK_COST } from '../reading/growing-body.js';
import type { ReadingBodies } from '../reading/reading-bodies.js';
import { isRpcResponseText, rpcError, INTERNAL_ERROR, type RpcId } from './wire.js';

/** One event's text may not grow past this while it waits for its end. */
export const MAX_SSE_EVENT_BYTES = 32 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;

/**
 * Splits an event stream into whole events as the SSE format defines them: an event ends with a
 * blank line, that is a line ending (CRLF, LF or CR) followed by another. Chunks are held as they
 * came and each byte is looked at once, so one large event arriving in many small chunks costs
 * time in proportion to its size (`scanned` counts the bytes searched, `copied` the bytes copied
 * to join an event's chunks).
 */
export class SseEventSplitter {
  scanned = 0;
  copied = 0;
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** The last byte seen ended a line (another line ending now ends the event). */
  private lineEnded = false;
  /** The last byte seen was a CR (an LF now is the rest of that line ending). */
  private afterCr = false;

  /** The bytes held for an event that is not whole yet. */
  get pendingBytes(): number {
    return this.heldBytes;
  }

  /** What holding them costs: each chunk is held as its own Buffer (`HELD_CHUNK_COST` each). */
  get pendingCost(): number {
    return this.heldBytes + this.held.length * HELD_CHUNK_COST;
  }

  /** Drops whatever is held, without joining it. */
  drop(): void {
    this.held = [];
    this.heldBytes = 0;
  }

  /** The whole events `chunk` completes, in order; the rest is held for the next chunk. */
  push(chunk: Buffer): Buffer[] {
    const events: Buffer[] = [];
    let start = 0;
    let i = 0;
    if (this.afterCr && chunk.length > 0) {
      this.afterCr = false;
      if (chunk[0] === LF) i = 1;
    }
    let nextLf = this.search(chunk, LF, i);
    let nextCr = this.search(chunk, CR, i);
    while (i < chunk.length) {
      if (nextLf !== -1 && nextLf < i) nextLf = this.search(chunk, LF, i);
      if (nextCr !== -1 && nextCr < i) nextCr = this.search(chunk, CR, i);
      const at = nextLf === -1 ? nextCr : nextCr === -1 ? nextLf : Math.min(nextLf, nextCr);
      if (at === -1) {
        this.lineEnded = false;
        break;
      }
      if (at > i) this.lineEnded = false;
      i = at + 1;
      if (chunk[at] === CR) {
        if (i === chunk.length) this.afterCr = true;
        else if (chunk[i] === LF) i += 1;
      }
      if (!this.lineEnded) {
        this.lineEnded = true;
        continue;
      }
      this.lineEnded = false;
      events.push(this.take(chunk.subarray(start, i)));
      start = i;
    }
    if (start < chunk.length) {
      this.held.push(chunk.subarray(start));
      this.heldBytes += chunk.length - start;
    }
    return events;
  }

  /** Whatever is held (not a whole event), and nothing held after. */
  rest(): Buffer {
    return this.take(Buffer.alloc(0));
  }

  private search(chunk: Buffer, byte: number, from: number): number {
    const at = chunk.indexOf(byte, from);
    this.scanned += (at === -1 ? chunk.length : at + 1) - Math.min(from, chunk.length);
    return at;
  }

  /** The held chunks and `last`, joined (copied only when something is held). */
  private take(last: Buffer): Buffer {
    if (this.held.length === 0) return last;
    const event = Buffer.concat([...this.held, last]);
    this.copied += event.length;
    this.held = [];
    this.heldBytes = 0;
    return event;
  }
}

/** The event's `data` (its `data:` lines joined), or `undefined` for a comment or a field-only block. */
function dataOf(event: Buffer): string | undefined {
  const lines = event.toString('utf8').split(/\r\n|\r|\n/);
  let data: string | undefined;
  for (const line of lines) {
    if (!line.startsWith('data')) continue;
    if (line !== 'data' && line[4] !== ':') continue;
    let value = line.slice(5);
    if (value.startsWith(' ')) value = value.slice(1);
    data = data === undefined ? value : `${data}\n${value}`;
  }
  return data;
}

/** An SSE `error` event carrying a JSON-RPC error, as the A2A SDK's own server writes one. */
export function errorEvent(id: RpcId, message: string): Buffer {
  return Buffer.from(`event: error\ndata: ${JSON.stringify(rpcError(id, INTERNAL_ERROR, message))}\n\n`);
}

export interface RelayHooks {
  /** Whether the client has gone (then nothing more is written, not even an error). */
  clientGone(): boolean;
  /** Ends the upstream request (a bad event: nothing after it is relayed). */
  abortUpstream(reason: Error): void;
  /** The message of the error event that ends a stream which broke off (or went silent) with `err`. */
  brokeOff(err: unknown): string;
  /** The message of the error event that ends a stream whose event, not yet whole, was let go (`ReadingBodies`). */
  letGo(): string;
}

/**
 * The runner's event stream, event by event as each one is whole, its bytes as they came. An
 * event whose data is not a JSON-RPC response ends the relay with an `error` event; so does the
 * stream breaking off or going silent for the idle timeout. Comments and events without data pass through as they are.
 * An event not yet whole counts in `bodies`; let go there, the relay ends with an error event.
 */
export async function* relayEvents(upstream: AsyncIterable<Buffer>, id: RpcId, bodies: ReadingBodies, hooks: RelayHooks): AsyncGenerator<Buffer, void, undefined> {
  const splitter = new SseEventSplitter();
  let letGo = false;
  const reading = bodies.begin('answer', () => {
    letGo = true;
    splitter.drop(); // its bytes dropped now, not when the upstream's end is seen
    hooks.abortUpstream(new Error('let go to make room for the other bodies being read'));
  });
  try {
    for await (const chunk of upstream) {
      const events = splitter.push(chunk);
      bodies.holds(reading, splitter.pendingCost);
      for (const event of events) {
        const data = dataOf(event);
        if (data !== undefined && !isRpcResponseText(data)) {
          hooks.abortUpstream(new Error('the runner sent an event that is not JSON-RPC'));
          yield errorEvent(id, 'the remote runner sent a stream event that is not a JSON-RPC response');
          return;
        }
        yield event;
      }
      if (splitter.pendingBytes > MAX_SSE_EVENT_BYTES) {
        hooks.abortUpstream(new Error('an event over the cap'));
        yield errorEvent(id, `the remote runner sent a stream event over ${MAX_SSE_EVENT_BYTES} bytes`);
        return;
      }
    }
  } catch (err) {
    if (hooks.clientGone()) return;
    yield errorEvent(id, letGo ? hooks.letGo() : hooks.brokeOff(err));
    return;
  } finally {
    bodies.end(reading);
  }
  if (letGo) {
    yield errorEvent(id, hooks.letGo());
    return;
  }
  // Whatever is left is not a whole event; a client discards it, but it is the runner's to send.
  const rest = splitter.rest();
  if (rest.length > 0) yield rest;
}

export function oneLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const line = message.split('\n')[0] ?? message;
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
