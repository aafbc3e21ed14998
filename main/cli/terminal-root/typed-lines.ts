import type { EventEmitter } from 'node:events';
import { columnsOf, printable } from './safe-text.js';

/**
 * Lines typed on a terminal, read key by key (raw mode) so that each line knows when its first key
 * was typed: a prompt can then take only what was typed after it appeared. The terminal's own line
 * editing is done here instead: printable keys are echoed, Backspace erases, Ctrl-U clears the
 * line, Enter ends it; Ctrl-C, Ctrl-\ and Ctrl-Z signal the foreground process group, as the
 * terminal would; Ctrl-D on an empty line ends the input; other escape sequences (arrows) are ignored.
 * While held (`hold()`, a prompt's guard time) every other key is dropped unechoed, and counted;
 * an Enter after the release that only ends a line dropped by the hold is no answer either.
 * Continued after a stop (Ctrl-Z, `fg`), raw mode is set again: the shell left the terminal in its own line mode.
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

/**
 * The event a `TypedLines` emits on its input once it has echoed an Enter: the cursor is on a new
 * row (the screen's cue that the row it left unfinished is done). An Enter dropped unechoed emits nothing.
 */
export const ECHOED_ENTER = Symbol('chatty:echoed-enter');

const SIGNALS: Record<string, NodeJS.Signals> = { '\x03': 'SIGINT', '\x1c': 'SIGQUIT', '\x1a': 'SIGTSTP' };
/** An escape sequence a key sends (CSI, SS3, or ESC and one character). */
const ESCAPE = /^\x1b(\[[0-?]*[ -/]*[@-~]|O.|.)?/;

export class TypedLines {
  private line = '';
  private startedAt: number | undefined;
  /** Keys typed so far: the clock `startedAt` and a prompt's mark read. */
  private keys = 0;
  private afterCr = false;
  /** Holds in force (`hold()`): while any is, keys other than the signals are dropped. */
  private holds = 0;
  /** Whether a key was dropped since the first hold began (the line in progress then included). */
  private dropped = false;
  /**
   * Whether the keys dropped last were a line with no Enter yet: the Enter that comes after the
   * release ends that line, not one of its own (it is handed on as begun before any mark).
   */
  private dangling = false;
  private readonly onData = (chunk: Buffer | string): void => this.take(String(chunk));
  /**
   * Continued after a stop (Ctrl-Z, then `fg`): the shell has put the terminal back in its own line
   * mode, where a line typed before a prompt appeared would come whole with the Enter typed after
   * it. Raw mode is set again (off first: the terminal layer skips a mode it believes is set).
   */
  private readonly onContinue = (): void => {
    try {
      this.input.setRawMode(false);
      this.input.setRawMode(true);
    } catch {
      // The terminal is gone: nothing to take back.
    }
  };

  constructor(
    private readonly input: TtyInput & { setRawMode(mode: boolean): unknown },
    private readonly echo: NodeJS.WritableStream,
    private readonly onLine: (line: TypedLine) => void,
    private readonly onEnd: () => void,
  ) {
    input.setRawMode(true);
    (input as NodeJS.ReadableStream & { setEncoding(e: string): void }).setEncoding('utf8');
    input.on('data', this.onData);
    input.once('end', this.onEnd);
    process.on('SIGCONT', this.onContinue);
    input.resume();
  }

  /** The key count now: a line whose first key comes later was typed after this moment. */
  mark(): number {
    return this.keys;
  }

  /**
   * Drops every key from now until the returned release is called (the signals still act): the
   * line in progress is dropped too, unechoed, with them. The release says whether any key was
   * dropped; once every hold is released, keys are typed again.
   */
  hold(): () => boolean {
    if (this.holds++ === 0) {
      this.dropped = this.line !== '';
      this.dangling = this.line !== '';
      this.line = '';
      this.startedAt = undefined;
      this.afterCr = false;
    }
    let released = false;
    return () => {
      if (released) return false;
      released = true;
      this.holds -= 1;
      return this.dropped;
    };
  }

  close(): void {
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    process.off('SIGCONT', this.onContinue);
    try {
      this.input.setRawMode(false);
    } catch {
      // The terminal is gone: nothing to restore.
    }
    this.input.pause();
  }

  private take(text: string): void {
    for (let i = 0; i < text.length; ) {
      const c = String.fromCodePoint(text.codePointAt(i)!); // a whole character: an emoji is one key, echoed whole
      if (c === '\x1b') {
        i += ESCAPE.exec(text.slice(i))![0].length;
        continue;
      }
      i += c.length;
      this.keys++;
      if (this.holds > 0 && SIGNALS[c] === undefined) {
        this.dropped = true;
        this.dangling = c !== '\r' && c !== '\n' && c !== '\x15';
        this.afterCr = c === '\r'; // a `\n` just after the release completes a dropped `\r\n`
        continue;
      }
      if (c === '\n' && this.afterCr) {
        this.afterCr = false; // `\r\n` is one Enter
        continue;
      }
      this.afterCr = c === '\r';
      const endsDropped = this.dangling && this.line === '';
      this.dangling = false;
      if (c === '\r' || c === '\n') {
        this.echo.write('\n'); // the terminal's output processing (ONLCR, kept in raw mode) makes it \r\n
        (this.input as unknown as EventEmitter).emit(ECHOED_ENTER);
        const line = { text: this.line, startedAt: endsDropped ? -1 : (this.startedAt ?? this.keys) };
        this.line = '';
        this.startedAt = undefined;
        this.onLine(line);
      } else if (c === '\x7f' || c === '\b') {
        if (this.line === '') continue;
        const chars = [...this.line];
        this.echo.write('\b \b'.repeat(echoColumns(chars.pop()!)));
        this.line = chars.join('');
      } else if (c === '\x15') {
        this.echo.write('\b \b'.repeat(echoColumns(this.line)));
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
        this.echo.write(echoed(c));
      }
    }
  }
}

/**
 * A typed character as it is echoed: through the terminal's printable rule, so that a pasted bidi
 * override shows as `<U+202E>` (and reorders nothing on the answer's row) and a C1 control (8-bit
 * CSI) moves no cursor; a tab as one space. The line keeps the character itself.
 */
function echoed(char: string): string {
  return char === '\t' ? ' ' : printable(char);
}

/** How many columns the echo of `text` took: what Backspace and Ctrl-U erase (a wide character two). */
function echoColumns(text: string): number {
  return [...text].reduce((sum, c) => sum + columnsOf(echoed(c)), 0);
}
