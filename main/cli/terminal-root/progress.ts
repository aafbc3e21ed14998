import type { ProgressEvent } from '../../fabric/wire/broker-to-worker.js';

export interface ProgressPrinterOptions {
  /** Where the steps go, one line each (default stderr). */
  output?: NodeJS.WritableStream;
  /** Where the artifact text goes as it streams (default: not shown). */
  text?: NodeJS.WritableStream;
  /** What each step line starts with (default `  `). */
  indent?: string;
}

/**
 * Shows one root call's progress as it happens: `<node> started` when the callee is admitted, then
 * each step as `[<node>] <step>` (a scripted agent's own callees' steps arrive as
 * `<callee>: <step>`, so the delegation chain reads along the line), and, when `text` is given,
 * the artifact text as it streams.
 */
export class ProgressPrinter {
  private node: string | undefined;
  private textEndsLine = true;
  private readonly output: NodeJS.WritableStream;
  private readonly indent: string;

  constructor(
    private readonly agent: string,
    private readonly options: ProgressPrinterOptions = {},
  ) {
    this.output = options.output ?? process.stderr;
    this.indent = options.indent ?? '  ';
  }

  readonly event = (event: ProgressEvent): void => {
    if ('Admitted' in event) {
      this.node = event.Admitted;
      this.output.write(`${this.indent}${event.Admitted} started\n`);
    } else if ('Step' in event) {
      this.output.write(`${this.indent}[${this.node ?? this.agent}] ${event.Step}\n`);
    } else if (this.options.text) {
      if (event.Text === '') return;
      this.options.text.write(event.Text);
      this.textEndsLine = event.Text.endsWith('\n');
    }
  };

  /** Ends the streamed text with a new line if it did not end with one. */
  finish(): void {
    if (this.options.text && !this.textEndsLine) this.options.text.write('\n');
    this.textEndsLine = true;
  }
}
