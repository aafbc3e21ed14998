import { Writable } from 'node:stream';
import { fitColumns, printable } from './safe-text.js';
import { ECHOED_ENTER } from './typed-lines.js';

/** What the bottom row holds, when it is a row left unfinished. */
type Bottom = 'prompter' | 'live' | 'text';

/** Columns assumed when the output does not say (not a terminal, or a pseudo-terminal of size 0). */
const DEFAULT_COLUMNS = 80;

/** The most output held while a question waits (string length); more is counted, not kept. */
export const HELD_LINES_MAX = 1024 * 1024;
/** The longest partial line held for a task before it is shown as a line of its own. */
export const HELD_LINE_MAX = 64 * 1024;

/**
 * `serve`'s stderr, shared by the prompter (`prompts`), whole lines (`lines`) and the running
 * tasks' artifact text (`text`) and status (`status`), so that nothing lands in the middle of a
 * question waiting for its answer: piped, a line is written on a line of its own and the waiting
 * question is shown again below it; on a terminal it waits until the question is answered.
 *
 * Not on a terminal (piped), one line per event: a task's text is shown line by line, each line
 * once it is complete, tagged `  #<n> | `; there is no status.
 *
 * On a terminal the bottom row is live, redrawn in place (`\r`, erase line): while no question
 * waits it shows each running task's status, `#1 local-coder-0 → local-reviewer-0 ▸ <step>` (the
 * delegation chain, then the current step), and `> ` while the command line waits for a task. A
 * task's text is shown as it streams: a partial line at once, on the bottom row in place of the
 * live row, which comes back below once the line is complete. A question waiting keeps the bottom
 * row, untouched: what the human types there stays shown and nothing scrolls the question away;
 * the lines and text that come meanwhile are shown once it is answered. Everything written (text,
 * status, the prompter's and the other lines, terminal or not) is stripped of escape sequences and
 * control characters other than new lines and tabs (`printable`), so that what a worker sends
 * cannot move the cursor or rewrite the terminal. The live row is cut to the terminal's width in
 * display columns, and cut again when the width changes (a terminal that re-wraps the old row as
 * it narrows may keep its first part above).
 */
export class Screen {
  /** What has been written after the last new line, and whose it is. */
  private partial = '';
  private partialOf: Bottom | undefined;
  /** The task whose text is the bottom row (when `partialOf` is `text`). */
  private openText: number | undefined;
  private waiting = false;
  /** Each task's text not shown yet (a partial line), in the order they came. */
  private readonly held = new Map<number, string>();
  /** On a terminal, the whole lines that came while a question waited, shown once it is answered. */
  private readonly heldLines: string[] = [];
  /** Their length, and what did not fit under `HELD_LINES_MAX` (a worker flooding while the human reads). */
  private heldChars = 0;
  private droppedChars = 0;
  /** Each running task's status, on a terminal. */
  private readonly statuses = new Map<number, string>();
  private readonly onInput: (() => void) | undefined;
  private readonly onResize = (): void => this.redraw();

  readonly prompts: Writable;
  readonly lines: Writable;

  /** `terminal`: the TTY the command line reads (Enter there moves the cursor to a new row); without one, line per event. */
  constructor(
    private readonly out: NodeJS.WritableStream & { columns?: number },
    private readonly terminal: NodeJS.ReadableStream | undefined,
  ) {
    // Whatever comes in (a worker's words inside a prompt, a failure reason, a broker line quoting a
    // worker's stderr) is made printable here, before it reaches the output, terminal or not.
    this.prompts = writer((text) => this.fromPrompter(printable(text)));
    this.lines = writer((text) => this.fromLines(printable(text)));
    if (terminal) {
      // An Enter echoed (`TypedLines`): the row is left as it is. An Enter dropped unechoed (a
      // prompt's guard time) leaves the row unfinished, and says nothing.
      this.onInput = () => {
        this.set('', undefined);
        this.showHeldLines(); // a question was answered: what came meanwhile, in the order it came
        this.redraw();
      };
      terminal.on(ECHOED_ENTER, this.onInput);
      // The terminal's width changed: the live row is cut to the new width and drawn again.
      out.on('resize', this.onResize);
    } else this.onInput = undefined;
  }

  /** Whether there is a live row: the output is a terminal the command line reads. */
  get live(): boolean {
    return this.terminal !== undefined;
  }

  /** The command line waits for a task (or no longer does): on a terminal `> ` ends the live row. */
  commandWaits(waiting: boolean): void {
    this.waiting = waiting;
    this.redraw();
  }

  /** Task `id`'s artifact text, as it streams. */
  text(id: number, chunk: string): void {
    const text = printable(chunk);
    if (text === '') return;
    if (this.partialOf === 'text' && this.openText === id) {
      this.emit(prefixed(id, text, false), 'text');
    } else {
      let pending = (this.held.get(id) ?? '') + text;
      // A line that never ends is shown in pieces rather than held without bound.
      if (pending.length - pending.lastIndexOf('\n') - 1 > HELD_LINE_MAX) pending += '\n';
      const cut = pending.lastIndexOf('\n');
      this.held.delete(id);
      if (cut < pending.length - 1) this.held.set(id, pending.slice(cut + 1));
      if (cut >= 0) return this.fromLines(prefixed(id, pending.slice(0, cut + 1), true));
    }
    this.redraw();
  }

  /** Task `id`'s text has ended: a partial line shown is ended, one held is shown as a line. */
  endText(id: number): void {
    if (this.partialOf === 'text' && this.openText === id) {
      this.out.write('\n');
      this.set('', undefined);
      this.redraw();
      return;
    }
    const rest = this.held.get(id);
    this.held.delete(id);
    if (rest !== undefined) this.fromLines(prefixed(id, `${rest}\n`, true));
  }

  /** On a terminal, task `id`'s part of the live row (undefined: the task has ended); not on a terminal, nothing. */
  status(id: number, status: string | undefined): void {
    if (!this.terminal) return;
    if (status === undefined) this.statuses.delete(id);
    else this.statuses.set(id, printable(status).replaceAll(/[\n\t]/g, ' '));
    this.redraw();
  }

  close(): void {
    this.waiting = false;
    this.statuses.clear();
    for (const id of [...this.held.keys()]) this.endText(id);
    if (this.partialOf === 'text' && this.openText !== undefined) this.endText(this.openText);
    this.showHeldLines();
    this.redraw();
    if (this.terminal && this.onInput) this.terminal.off(ECHOED_ENTER, this.onInput);
    if (this.terminal) this.out.off('resize', this.onResize);
  }

  private fromPrompter(text: string): void {
    // A line of its own (mail, an approval answered by --approvals) while a question waits: as a whole line.
    if (this.partialOf === 'prompter' && text.startsWith('chatty-gateway: ')) return this.fromLines(text);
    if (this.partialOf !== 'prompter') this.clearBottom();
    this.emit(text, 'prompter');
    if (this.partialOf !== 'prompter') this.showHeldLines();
    this.redraw();
  }

  private fromLines(text: string): void {
    // On a terminal a waiting question's row is left alone: what is typed there stays shown, and nothing scrolls the question away.
    if (this.terminal && this.partialOf === 'prompter') {
      if (this.heldChars + text.length > HELD_LINES_MAX) this.droppedChars += text.length;
      else {
        this.heldLines.push(text);
        this.heldChars += text.length;
      }
      return;
    }
    const kept = this.partialOf === 'prompter' ? this.partial : undefined;
    this.clearBottom();
    this.emit(text, undefined);
    if (kept !== undefined && this.partial === '') this.emit(kept, 'prompter');
    this.redraw();
  }

  /** The lines held while a question waited, each on a line of its own. */
  private showHeldLines(): void {
    if (this.droppedChars > 0) this.heldLines.push(`chatty-gateway: (${this.droppedChars} characters of output came while the question waited and are not shown)\n`);
    this.heldChars = 0;
    this.droppedChars = 0;
    for (const text of this.heldLines.splice(0)) {
      this.clearBottom();
      this.emit(text, undefined);
    }
  }

  /**
   * On a terminal, once the bottom row is free (no question waiting, no partial line of text open):
   * a task's held partial line if there is one, else the live row.
   */
  private redraw(): void {
    if (!this.terminal || this.partialOf === 'prompter' || this.partialOf === 'text') return;
    const [next] = this.held;
    if (next) {
      const [id, text] = next;
      this.held.delete(id);
      this.clearBottom();
      this.openText = id;
      this.emit(prefixed(id, text, true), 'text');
      return;
    }
    const live = this.liveRow();
    if (this.partialOf === 'live' && this.partial === live) return;
    this.clearBottom();
    this.emit(live, 'live');
  }

  /** `[#1 local-coder-0 ▸ running npm test │ #2 …] > `, cut to fit one row (in display columns: a wide character takes two); `> ` alone when no task runs. */
  private liveRow(): string {
    const prompt = this.waiting ? '> ' : '';
    if (this.statuses.size === 0) return prompt;
    const columns = this.out.columns || DEFAULT_COLUMNS;
    const room = Math.max(8, columns - 1 - prompt.length - 3);
    const status = fitColumns([...this.statuses.values()].join(' │ '), room);
    return `[${status}]${prompt === '' ? '' : ` ${prompt}`}`;
  }

  /** Ends the unfinished bottom row to write below or over it: a partial line of text is ended, a question's or the live row erased on a terminal, else a new line. */
  private clearBottom(): void {
    if (this.partial === '') return;
    this.out.write(this.terminal && this.partialOf !== 'text' ? '\r\x1b[K' : '\n');
    this.set('', undefined);
  }

  private emit(text: string, of: Bottom | undefined): void {
    if (text === '') return;
    this.out.write(text);
    const newline = text.lastIndexOf('\n');
    if (newline >= 0) this.set(text.slice(newline + 1), of);
    else this.set(this.partial + text, of ?? this.partialOf);
  }

  private set(partial: string, of: Bottom | undefined): void {
    this.partial = partial;
    this.partialOf = partial === '' ? undefined : of;
  }
}

/**
 * Task `id`'s text with its tag before each line: `  #1 | `. `atLineStart`: the text starts a
 * line (else it continues the one shown). A text ending in a new line leaves the next line untagged
 * until it has text.
 */
function prefixed(id: number, text: string, atLineStart: boolean): string {
  const tag = `  #${id} | `;
  const parts = text.split('\n');
  return parts.map((part, i) => ((i > 0 || atLineStart) && !(i === parts.length - 1 && part === '') ? `${tag}${part}` : part)).join('\n');
}

/** A stream whose writes are handed to `write` at once, in order. */
export function writer(write: (text: string) => void): Writable {
  return new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void) {
      write(String(chunk));
      callback();
    },
  });
}
