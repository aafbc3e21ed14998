import { AnswerTooLargeError, MAX_ANSWER_BYTES } from './gateway-http.js';

/** One dispatched Server-Sent Event: its type (`message` when unnamed) and its data. */
export interface ParsedSseEvent {
  readonly event: string;
  readonly data: string;
}

/**
 * An incremental Server-Sent Events reader (the WHATWG event-stream rules, minus `retry` and
 * `id`, which a one-shot POST response has no use for). Text in, whole events out, so a response
 * that streams its answers is relayed as each one arrives.
 */
export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];
  /** Bytes (UTF-8, as they came) of the event being read: its data lines and the line not yet ended. */
  private held = 0;
  private lastEndedInCr = false;

  /**
   * `maxEventBytes`: what one event may hold before it is refused (AnswerTooLargeError), so an
   * endless one is not kept. Bytes, as the body cap counts: counted in UTF-16 units, text of two-
   * and three-byte characters was held up to 2× past it.
   */
  constructor(private readonly maxEventBytes: number = MAX_ANSWER_BYTES) {}

  /** Returns every event this chunk completes; throws AnswerTooLargeError when the event being read passes the cap. */
  push(text: string): ParsedSseEvent[] {
    this.held += Buffer.byteLength(text);
    // Lines are looked for only when one may have ended: a long line arriving in pieces is not rescanned per piece.
    // (The last piece's end is asked of the piece: asking the joined buffer would flatten it each time.)
    const mayEndLine = this.lastEndedInCr || text.includes('\n') || text.includes('\r');
    this.lastEndedInCr = text.endsWith('\r') || (text === '' && this.lastEndedInCr);
    this.buffer += text;
    const events: ParsedSseEvent[] = [];
    if (!mayEndLine) {
      if (this.held > this.maxEventBytes) throw new AnswerTooLargeError(this.maxEventBytes);
      return events;
    }
    /** The text after the last blank line (an event's end) of this chunk: all the next event holds. */
    let afterLastEnd: string | undefined;
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      // A trailing CR may be the first half of a CRLF: wait for the next chunk to tell.
      if (!match || (match[0] === '\r' && match.index === this.buffer.length - 1)) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      if (line === '') afterLastEnd = this.buffer;
      this.line(line, events);
    }
    // Counted once per chunk, not at each event's end: that rescanned the rest of the chunk per event.
    if (afterLastEnd !== undefined) this.held = Buffer.byteLength(afterLastEnd);
    if (this.held > this.maxEventBytes) throw new AnswerTooLargeError(this.maxEventBytes);
    return events;
  }

  /** The stream ended: an event without its closing blank line is dropped, as the format says. */
  end(): ParsedSseEvent[] {
    const events: ParsedSseEvent[] = [];
    if (this.buffer !== '') this.line(this.buffer.replace(/\r$/, ''), events);
    this.buffer = '';
    this.event = '';
    this.data = [];
    this.held = 0;
    return events;
  }

  private line(line: string, events: ParsedSseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) events.push({ event: this.event || 'message', data: this.data.join('\n') });
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return; // a comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
  }
}
