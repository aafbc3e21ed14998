/**
 * Lines typed on a terminal, read key by key (raw mode) so that each line knows when its first key
 * was typed: a prompt can then take only what was typed after it appeared. The terminal's own line
 * editing is done here instead: printable keys are echoed, Backspace erases, Ctrl-U clears the
 * line, Enter ends it; Ctrl-C, Ctrl-\ and Ctrl-Z signal the foreground process group, as the
 * terminal would; Ctrl-D on an empty line ends the input; other escape sequences (arrows) are ignored.
 */
export interface TypedLine {
  text: string;
  /** The key count when its first key was typed (or when Enter was, for an empty line). */
  startedAt: number;
}

export interface TtyInput extends NodeJS.ReadableStream {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
}

/** Whether `input` is a terminal this reader can put in raw mode. */
export function canReadKeys(input: NodeJS.ReadableStream): input is TtyInput & { setRawMode(mode: boolean): unknown } {
  const tty = input as TtyInput;
  return tty.isTTY === true && typeof tty.setRawMode === 'function';
}

const SIGNALS: Record<string, NodeJS.Signals> = { '\x03': 'SIGINT', '\x1c': 'SIGQUIT', '\x1a': 'SIGTSTP' };
/** An escape sequence a key sends (CSI, SS3, or ESC and one character). */
const ESCAPE = /^\x1b(\[[0-?]*[ -/]*[@-~]|O.|.)?/;

export class TypedLines {
  private line = '';
  private startedAt: number | undefined;
  /** Keys typed so far: the clock `startedAt` and a prompt's mark read. */
  private keys = 0;
  private afterCr = false;
  private readonly onData = (chunk: Buffer | string): void => this.take(String(chunk));

  constructor(
    private readonly input: TtyInput & { setRawMode(mode: boolean): unknown },
    private readonly echo: NodeJS.WritableStream,
    private readonly onLine: (line: TypedLine) => void,
    private readonly onEnd: () => void,
  ) {
    input.setRawMode(true);
    (input as NodeJS.ReadableStream & { setEncoding(e: string): void }).setEncoding('utf8');
    // First: the echo of Enter must be out before another listener (the screen) redraws its row.
    (input as unknown as NodeJS.EventEmitter).prependListener('data', this.onData);
    input.once('end', this.onEnd);
    input.resume();
  }

  /** The key count now: a line whose first key comes later was typed after this moment. */
  mark(): number {
    return this.keys;
  }

  close(): void {
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    try {
      this.input.setRawMode(false);
    } catch {
      // The terminal is gone: nothing to restore.
    }
    this.input.pause();
  }

  private take(text: string): void {
    for (let i = 0; i < text.length; ) {
      const c = text[i]!;
      if (c === '\x1b') {
        i += ESCAPE.exec(text.slice(i))![0].length;
        continue;
      }
      i += c.length;
      this.keys++;
      if (c === '\n' && this.afterCr) {
        this.afterCr = false; // `\r\n` is one Enter
        continue;
      }
      this.afterCr = c === '\r';
      if (c === '\r' || c === '\n') {
        this.echo.write('\n'); // the terminal's output processing (ONLCR, kept in raw mode) makes it \r\n
        const line = { text: this.line, startedAt: this.startedAt ?? this.keys };
        this.line = '';
        this.startedAt = undefined;
        this.onLine(line);
      } else if (c === '\x7f' || c === '\b') {
        if (this.line === '') continue;
        this.line = [...this.line].slice(0, -1).join('');
        this.echo.write('\b \b');
      } else if (c === '\x15') {
        this.echo.write('\b \b'.repeat([...this.line].length));
        this.line = '';
        this.startedAt = undefined;
      } else if (c === '\x04') {
        if (this.line === '') this.onEnd();
      } else if (SIGNALS[c] !== undefined) {
        this.line = '';
        this.startedAt = undefined;
        try {
          process.kill(0, SIGNALS[c]);
        } catch {
          process.kill(process.pid, SIGNALS[c]);
        }
      } else if (c === '\t' || c >= ' ') {
        this.startedAt ??= this.keys;
        this.line += c;
        this.echo.write(c);
      }
    }
  }
}
