import type { AnswerInput } from '../../broker/human-loop.js';
import type { ApprovalRequest, QuestionToRoot, Verdict } from '../../broker/index.js';
import { describeApproval, describeAsker } from './describe.js';
import { LineQueue } from './line-queue.js';
import { printable } from './safe-text.js';

export interface PrompterOptions {
  /** Where answers are read (default stdin). */
  input?: NodeJS.ReadableStream;
  /** Where prompts are written (default stderr: stdout is the result's). */
  output?: NodeJS.WritableStream;
  /** What each line the prompter writes starts with (default `chatty-gateway: `). */
  prefix?: string;
  /** Write each answer read after its prompt (default: when the input is not a TTY, which echoes by itself). */
  echo?: boolean;
  /**
   * The lines to read answers from, when something else reads the same input too (`serve`'s
   * command line): the prompter's reads are urgent, served before the other reader's. Default: a
   * queue of its own over `input`, closed by `close()`.
   */
  lines?: LineQueue;
}

/** A question the human gave no answer to: the input ended. The asker's `human.ask` fails with this message. */
export class NoAnswer extends Error {
  override readonly name = 'NoAnswer';
}

/**
 * Shows approvals and questions on the terminal, one at a time (those that come meanwhile wait
 * their turn), with who asks (the agent and its chain), and reads the answers line by line.
 *
 * - An approval: `y`/`yes` approves; `n`/`no` or an empty line denies; anything else asks again.
 *   Input that has ended denies.
 * - A question: each of its questions in turn; with options, a number picks one (`custom: false`);
 *   any other non-empty line is the answer in the human's words (`custom: true`). Input that has
 *   ended fails the question (`NoAnswer`).
 * - A request withdrawn while it waits (the worker gave up, its call ended) is dropped, saying so
 *   if it was on the screen; the line it would have read is left for the next prompt.
 */
export class TerminalPrompter {
  private readonly lines: LineQueue;
  private readonly output: NodeJS.WritableStream;
  private readonly prefix: string;
  private readonly echo: boolean;
  private readonly ownLines: boolean;
  private turn: Promise<unknown> = Promise.resolve();

  constructor(options: PrompterOptions = {}) {
    this.ownLines = options.lines === undefined;
    this.lines = options.lines ?? new LineQueue(options.input ?? process.stdin);
    this.output = options.output ?? process.stderr;
    this.prefix = options.prefix ?? 'chatty-gateway: ';
    // A terminal echoes what is typed; piped input is shown after its prompt, so the transcript reads as a dialogue.
    const input = (options.input ?? process.stdin) as NodeJS.ReadableStream & { isTTY?: boolean };
    this.echo = options.echo ?? input.isTTY !== true;
  }

  approve(request: ApprovalRequest, signal: AbortSignal): Promise<Verdict> {
    return this.inTurn(signal, 'denied', async () => {
      this.write(`${this.prefix}${describeAsker(request.asker)} asks to ${describeApproval(request)}\n`);
      for (;;) {
        this.write('  approve? [y/N] ');
        const line = await this.read(signal);
        if (signal.aborted) return this.withdrawn('denied');
        if (line === undefined) {
          this.write('\n  (no answer: the input ended) denied\n');
          return 'denied';
        }
        const word = line.trim().toLowerCase();
        if (word === 'y' || word === 'yes') {
          this.write('  approved\n');
          return 'approved';
        }
        if (word === '' || word === 'n' || word === 'no') {
          this.write('  denied\n');
          return 'denied';
        }
        this.write('  please answer y or n\n');
      }
    });
  }

  ask(request: QuestionToRoot, signal: AbortSignal): Promise<AnswerInput[]> {
    return this.inTurn(signal, [], async () => {
      const answers: AnswerInput[] = [];
      for (const question of request.questions) {
        // A question of several lines reads indented below its first, and each option is one line, so neither can pass for a line of the gateway's own.
        this.write(`${this.prefix}${describeAsker(request.asker)} asks: ${question.question.replaceAll('\n', '\n    ')}\n`);
        question.options.forEach((option, i) => this.write(`  ${i + 1}) ${option.replaceAll(/[\n\t]/g, ' ')}\n`));
        for (;;) {
          this.write(question.options.length > 0 ? '  answer (a number, or your own words): ' : '  answer: ');
          const line = await this.read(signal);
          if (signal.aborted) return this.withdrawn([]);
          if (line === undefined) {
            this.write('\n  (no answer: the input ended)\n');
            throw new NoAnswer(`no answer to ${JSON.stringify(question.question)}: the terminal's input ended`);
          }
          const text = line.trim();
          if (text === '') continue;
          const pick = /^\d+$/.test(text) ? question.options[Number(text) - 1] : undefined;
          answers.push(pick !== undefined ? { id: question.id, answer: pick, custom: false } : { id: question.id, answer: text, custom: true });
          break;
        }
      }
      return answers;
    });
  }

  /** Stops reading the input, if the queue is its own (the process can then exit with stdin still open); waiting prompts end as if it had ended. */
  close(): void {
    if (this.ownLines) this.lines.close();
  }

  /** Runs `prompt` once every earlier prompt is done; a request withdrawn before its turn is never shown. */
  private inTurn<T>(signal: AbortSignal, ifWithdrawn: T, prompt: () => Promise<T>): Promise<T> {
    const run = this.turn.then(() => (signal.aborted ? ifWithdrawn : prompt()));
    this.turn = run.catch(() => {});
    return run;
  }

  private async read(signal: AbortSignal): Promise<string | undefined> {
    const line = await this.lines.next(signal, { urgent: true });
    if (line !== undefined && this.echo) this.write(`${line}\n`);
    return line;
  }

  private withdrawn<T>(value: T): T {
    this.write('\n  (withdrawn: the agent no longer waits for this)\n');
    return value;
  }

  /** Writes what may hold a worker's words (the question, the options, who asks) made printable first, whatever the output. */
  private write(text: string): void {
    this.output.write(printable(text));
  }
}
