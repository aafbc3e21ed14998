import type { ProgressEvent } from '../../fabric/wire/broker-to-worker.js';
import { printable } from './safe-text.js';

export interface ProgressPrinterOptions {
  /** Where the steps go, one line each (default stderr). */
  output?: NodeJS.WritableStream;
  /** Where the artifact text goes as it streams (default: not shown). */
  text?: NodeJS.WritableStream;
  /** What each step line starts with (default `  `). */
  indent?: string;
  /**
   * Where the steps go instead of lines (a terminal's live status): the delegation chain (the
   * callee, then its callees as their steps name them) and the current step.
   */
  status?: (chain: readonly string[], step: string) => void;
}

/**
 * Shows one root call's progress as it happens: `<node> started` when the callee is admitted, then
 * each step as `[<node>] <step>` (a scripted agent's own callees' steps arrive as
 * `<callee>: <step>`, so the delegation chain reads along the line), or, when `status` is given,
 * each step handed to it with the chain taken apart (`['local-coder-0', 'local-reviewer-0']`,
 * `running npm test`); and, when `text` is given, the artifact text as it streams (as it came: the
 * caller makes it printable when it goes to a terminal).
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
      this.line(`${event.Admitted} started`);
      this.options.status?.([event.Admitted], 'started');
    } else if ('Step' in event) {
      if (this.options.status) this.options.status(...chainOf(this.node ?? this.agent, event.Step));
      else this.line(`[${this.node ?? this.agent}] ${event.Step}`);
    } else if (this.options.text) {
      if (event.Text === '') return;
      this.options.text.write(event.Text);
      this.textEndsLine = event.Text.endsWith('\n');
    }
  };

  /** One step line, made printable (a worker names its steps), whatever the output: one row, never an escape sequence. */
  private line(text: string): void {
    this.output.write(`${this.indent}${printable(text).replaceAll(/[\n\t]/g, ' ')}\n`);
  }

  /** Ends the streamed text with a new line if it did not end with one. */
  finish(): void {
    if (this.options.text && !this.textEndsLine) this.options.text.write('\n');
    this.textEndsLine = true;
  }
}

/** An admitted node's name and the `: ` after it (`<agent>-<n>: `), read where the last one ended (sticky). */
const NODE_NAME = /([A-Za-z0-9][A-Za-z0-9._-]*-\d+): /y;

/**
 * `local-reviewer-0: running npm test` from `local-coder-0` → `[local-coder-0, local-reviewer-0]`,
 * `running npm test`. Each name is read from where the last one ended, never the rest again: a
 * worker names its steps, and one naming a node N times must cost N, not N² (40,000 names held
 * the main thread 5 s).
 */
function chainOf(node: string, step: string): [string[], string] {
  const chain = [node];
  let at = 0;
  for (;;) {
    NODE_NAME.lastIndex = at;
    const m = NODE_NAME.exec(step);
    if (!m) break;
    chain.push(m[1]!);
    at = NODE_NAME.lastIndex;
  }
  return [chain, step.slice(at)];
}
