/** A framing failure on a byte stream: the stream cannot be read further, so the transport fails. */
export class FramingError extends Error {
  override readonly name: string = 'FramingError';
}

/** A line grew past the cap before its newline arrived; nothing past the cap is ever buffered. */
export class LineTooLongError extends FramingError {
  override readonly name = 'LineTooLongError';

  constructor(readonly maxLineBytes: number) {
    super(`jsonrpc: a line is longer than ${maxLineBytes} bytes`);
  }
}

export class InvalidUtf8Error extends FramingError {
  override readonly name = 'InvalidUtf8Error';

  constructor() {
    super('jsonrpc: a line is not valid UTF-8');
  }
}

const NEWLINE = 0x0a;

/**
 * Splits a byte stream into UTF-8 lines of at most `maxLineBytes` bytes (newline excluded).
 * Blank lines are skipped. Bytes in, strings out: no stream types, so it is testable alone.
 */
export class LineSplitter {
  private parts: Uint8Array[] = [];
  private size = 0;
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });

  constructor(readonly maxLineBytes: number) {}

  /** Returns every line this chunk completes; throws a FramingError. */
  push(chunk: Uint8Array): string[] {
    const lines: string[] = [];
    let from = 0;
    for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, from)) {
      this.append(chunk.subarray(from, newline));
      this.take(lines);
      from = newline + 1;
    }
    this.append(chunk.subarray(from));
    return lines;
  }

  /** The input ended: returns the last line if it had no newline. */
  end(): string[] {
    const lines: string[] = [];
    this.take(lines);
    return lines;
  }

  private append(part: Uint8Array): void {
    if (this.size + part.length > this.maxLineBytes) throw new LineTooLongError(this.maxLineBytes);
    if (part.length === 0) return;
    this.parts.push(part);
    this.size += part.length;
  }

  private take(lines: string[]): void {
    const bytes = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    let line: string;
    try {
      line = this.decoder.decode(bytes);
    } catch {
      throw new InvalidUtf8Error();
    }
    if (line.trim() !== '') lines.push(line);
  }
}
