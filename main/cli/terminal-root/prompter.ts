import type { AnswerInput } from '../../broker/human-loop.js';
import { checkRelayedAnswers, describeMatch, type ApprovalDecision, type ApprovalMatch, type ApprovalRequest, type QuestionToRoot } from '../../broker/index.js';
import { plainGrantCommand, type PluginGrantDecision, type PluginGrantRequest } from '../../plugins/grants/index.js';
import { approvalDetails, describeApproval, describeAsker, describeOffer, recallApproval, runningLines, shown, shownOneLine } from './describe.js';
import { describeGrant, grantDetails } from './describe-grant.js';
import { GUARD_MS, REPLACED_GUARD_TIMES } from '../../display/index.js';
import { LineQueue } from './line-queue.js';
import { printable } from './safe-text.js';

export interface PrompterOptions {
  /** How a denied grant says to give it later (default `chatty-gateway plugin grant NAME`). */
  grantCommand?: ((plugin: string) => string) | undefined;
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
  /**
   * Where "always" rules are kept (`serve --approvals-file`): `a` (always for this agent) is
   * offered only when they are kept somewhere. `t` (for this task) is offered for a request made
   * under a root task.
   */
  alwaysFile?: string | undefined;
  /**
   * On a terminal, how long (ms) each prompt takes no answer after its request appears (default
   * `GUARD_MS`, 600, the popover's): its answer cue (`[y/N]`) is shown only then.
   */
  guardMs?: number | undefined;
}

/**
 * A question or an approval the human gave no answer to: the input ended. The asker's `human.ask`
 * fails with this message; an approval is denied, recorded `by: no-root`.
 */
export class NoAnswer extends Error {
  override readonly name = 'NoAnswer';
}

/** What a prompt says of the keys it dropped: typed before it appeared, or in its guard time. */
const IGNORED = '(ignored keys typed before this prompt appeared)';

/** Resolves after `ms`, or at once when `signal` aborts. */
function guardTime(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** The scopes a remembered approval can have, as the prompt's keys. */
type Remember = 'task' | 'always';

/**
 * Shows approvals and questions on the terminal, one at a time (those that come meanwhile wait
 * their turn), with who asks (the agent and its chain), and reads the answers line by line. Every
 * field a worker controls goes through the display rule (`main/display`).
 *
 * - An approval: its command or path, the workspace, a write's resolved path, the danger tags and
 *   a warning for hidden characters; then `y` approves once, `t` for this root task and `a` always
 *   for this agent (its role) — each showing the match it would remember (the exact command, or a
 *   prefix such as `npm test *`, or a directory glob) to be confirmed first — and `n`, an empty
 *   line or anything after the input ended denies. `t` and `a` are not offered for a request with
 *   hidden characters (nothing is remembered for one), `t` not without a root task, `a` not
 *   without a rules file.
 * - A question: each of its questions in turn; with options, a number picks one (`custom: false`);
 *   any other non-empty line is the answer in the human's words (`custom: true`). Input that has
 *   ended fails the question (`NoAnswer`).
 * - A plugin's capability request (`grant`): what it asks for, one ask a line; `y` grants, `n`,
 *   an empty line or the input's end denies (nothing is granted by default).
 * - On a terminal each prompt has a guard time (`guardMs`, `GUARD_MS` = 600 ms, the popover's):
 *   the request is shown at once, its answer cue (`[y/N]`) only after the guard, and only a line
 *   typed after the cue appeared answers it. Keys typed before (type-ahead, a `y` for a prompt
 *   since withdrawn, a paste, Enter held down) are dropped unechoed and said to be ignored, and the
 *   Enter that ends a dropped line is no answer either. A command too tall to stay in view is
 *   recalled (its start and size) just above `approve?`. A request withdrawn while it waits is
 *   dropped, saying so if it was on the screen.
 */
export class TerminalPrompter {
  private readonly lines: LineQueue;
  private readonly output: NodeJS.WritableStream;
  private readonly prefix: string;
  private readonly echo: boolean;
  private readonly ownLines: boolean;
  private readonly alwaysFile: string | undefined;
  private readonly grantCommand: (plugin: string) => string;
  private readonly guardMs: number;
  private turn: Promise<unknown> = Promise.resolve();
  /** The request last on the screen was withdrawn, not answered: the next one says so and waits longer for its answer. */
  private afterWithdrawal = false;

  constructor(options: PrompterOptions = {}) {
    this.ownLines = options.lines === undefined;
    this.output = options.output ?? process.stderr;
    this.lines = options.lines ?? new LineQueue(options.input ?? process.stdin, this.output);
    this.prefix = options.prefix ?? 'chatty-gateway: ';
    this.alwaysFile = options.alwaysFile;
    this.grantCommand = options.grantCommand ?? plainGrantCommand;
    this.guardMs = options.guardMs ?? GUARD_MS;
    // A terminal echoes what is typed; piped input is shown after its prompt, so the transcript reads as a dialogue.
    const input = (options.input ?? process.stdin) as NodeJS.ReadableStream & { isTTY?: boolean };
    this.echo = options.echo ?? input.isTTY !== true;
  }

  approve(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
    return this.inTurn<ApprovalDecision>(signal, 'denied', async () => {
      this.write(`${this.prefix}${describeAsker(request.asker)} asks to ${describeApproval(request)}\n`);
      for (const line of approvalDetails(request)) this.write(`${line}\n`);
      const offers = request.hidden ? [] : request.proposals;
      const can = { task: offers.length > 0 && request.task !== undefined, always: offers.length > 0 && this.alwaysFile !== undefined };
      const keys = ['y', ...(can.task ? ['t'] : []), ...(can.always ? ['a'] : []), 'n'];
      if (can.task || can.always) {
        const role = shown(request.role);
        this.write(`  y: approve once${can.task ? ' · t: approve for this task' : ''}${can.always ? ` · a: always for ${role}` : ''} · n: deny (the default)\n`);
      }
      const recall = recallApproval(request);
      if (recall !== undefined) this.write(`${recall}\n`);
      for (const line of runningLines(request)) this.write(`${line}\n`);
      for (;;) {
        const word = await this.readWord('  approve?', ' [y/N] ', signal);
        if (signal.aborted) return this.withdrawn('denied');
        if (word === undefined) return this.noAnswer();
        if (word === 'y' || word === 'yes') {
          this.write('  approved\n');
          return 'approved';
        }
        if (word === '' || word === 'n' || word === 'no') {
          this.write('  denied\n');
          return 'denied';
        }
        const remember: Remember | undefined = word === 't' && can.task ? 'task' : word === 'a' && can.always ? 'always' : undefined;
        if (remember) {
          const match = await this.confirmMatch(request, offers, remember, signal);
          if (signal.aborted) return this.withdrawn('denied');
          if (match === null) return this.noAnswer();
          if (match === undefined) continue; // not confirmed: the question stands
          this.write(`  approved, and ${remember === 'task' ? 'for this task' : 'always'}: ${shown(describeMatch(match))}\n`);
          return { verdict: 'approved', remember, match };
        }
        this.write(`  please answer ${keys.slice(0, -1).join(', ')} or ${keys.at(-1)!}\n`);
      }
    });
  }

  /**
   * A plugin's capability request (`registry.grants`): the plugin, its version, a short digest and
   * each ask on its own line, then `y` grants and `n`, an empty line or the input's end denies.
   * It takes its turn with the approvals and questions, and is read the same way.
   */
  grant(request: PluginGrantRequest, signal: AbortSignal): Promise<PluginGrantDecision> {
    return this.inTurn<PluginGrantDecision>(signal, 'denied', async () => {
      this.write(`${this.prefix}${describeGrant(request)}\n`);
      for (const line of grantDetails(request)) this.write(`${line}\n`);
      for (;;) {
        const word = await this.readWord('  grant?', ' [y/N] ', signal);
        if (signal.aborted) {
          this.write('\n  (withdrawn: the plugin no longer waits for this grant)\n');
          this.afterWithdrawal = true;
          return 'denied';
        }
        if (word === undefined) {
          this.write('\n  (no answer: the input ended) denied\n');
          return 'denied';
        }
        if (word === 'y' || word === 'yes') {
          this.write('  granted\n');
          return 'granted';
        }
        if (word === '' || word === 'n' || word === 'no') {
          this.write(`  denied (grant it later with: ${this.grantCommand(shownOneLine(request.plugin))})\n`);
          return 'denied';
        }
        this.write('  please answer y or n\n');
      }
    });
  }

  /**
   * Which match to remember (when more than one is offered), then a confirmation that names it and
   * its scope. Undefined when the person does not confirm; null when the input ended.
   */
  private async confirmMatch(request: ApprovalRequest, offers: readonly ApprovalMatch[], remember: Remember, signal: AbortSignal): Promise<ApprovalMatch | undefined | null> {
    let match = offers[0]!;
    if (offers.length > 1) {
      offers.forEach((offer, i) => this.write(`    ${i + 1}) ${describeOffer(offer)}\n`));
      for (;;) {
        const word = await this.readWord('  remember which?', ' [1] ', signal);
        if (word === undefined || signal.aborted) return signal.aborted ? undefined : null;
        const pick = word === '' ? 1 : /^\d+$/.test(word) ? Number(word) : NaN;
        if (pick >= 1 && pick <= offers.length) {
          match = offers[pick - 1]!;
          break;
        }
        this.write(`  please answer a number from 1 to ${offers.length}\n`);
      }
    }
    // A task grant holds in the workspace shown above only (human-loop.ts): said where it is confirmed.
    const scope = remember === 'task' ? `until this task ends${request.workspace !== undefined ? ', in this workspace' : ''}` : `from now on (kept in ${shown(this.alwaysFile ?? '')})`;
    const word = await this.readWord(`  approve ${shown(describeMatch(match))} for ${shown(request.role)} ${scope}?`, ' [y/N] ', signal);
    if (word === undefined || signal.aborted) return signal.aborted ? undefined : null;
    if (word === 'y' || word === 'yes') return match;
    this.write('  not remembered\n');
    return undefined;
  }

  ask(request: QuestionToRoot, signal: AbortSignal): Promise<AnswerInput[]> {
    return this.inTurn(signal, [], async () => {
      const answers: Required<AnswerInput>[] = [];
      for (const question of request.questions) {
        // A question of several lines reads indented below its first, and each option is one line, so neither can pass for a line of the gateway's own.
        this.write(`${this.prefix}${describeAsker(request.asker)} asks: ${shown(question.question)}\n`);
        question.options.forEach((option, i) => this.write(`  ${i + 1}) ${shown(option).replaceAll(/\n +|\t/g, ' ')}\n`));
        for (;;) {
          const line = await this.readLine(question.options.length > 0 ? '  answer (a number, or your own words)' : '  answer', ': ', signal);
          if (signal.aborted) return this.withdrawn([]);
          if (line === undefined) {
            this.write('\n  (no answer: the input ended)\n');
            throw new NoAnswer(`no answer to ${JSON.stringify(question.question)}: the terminal's input ended`);
          }
          const text = line.trim();
          if (text === '') continue;
          const pick = /^\d+$/.test(text) ? question.options[Number(text) - 1] : undefined;
          const answer = pick !== undefined ? { id: question.id, answer: pick, custom: false } : { id: question.id, answer: text, custom: true };
          // The broker passes on only what the asker's wire may carry (RootTransport.onQuestion):
          // an answer past it is said here and asked again, not refused once the person has gone.
          const tooLong = checkRelayedAnswers(request.questions, [...answers, answer]);
          if (tooLong !== undefined) {
            this.write(`  that answer cannot be passed on (${tooLong}): please answer more briefly\n`);
            continue;
          }
          answers.push(answer);
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
    const run = this.turn.then(() => {
      if (signal.aborted) return ifWithdrawn;
      // A swap the person did not make (a worker withdrew what they read, another was queued): said before it.
      if (this.afterWithdrawal) this.write(`  !! the request above was withdrawn: the one below is another request (its answer waits ${REPLACED_GUARD_TIMES} guard times)\n`);
      return prompt();
    });
    this.turn = run.catch(() => {});
    return run;
  }

  private async readWord(question: string, cue: string, signal: AbortSignal): Promise<string | undefined> {
    return (await this.readLine(question, cue, signal))?.trim().toLowerCase();
  }

  /**
   * Shows `question`, then its answer `cue` (`[y/N]`), and reads the first line typed after the
   * cue appeared. On a terminal the cue waits for the guard time, and every key typed before it
   * appeared — the line in progress, keys typed as the question appeared, Enter held down — is
   * dropped (and said to be); piped input is a script, read in order, with no guard.
   */
  private async readLine(question: string, cue: string, signal: AbortSignal): Promise<string | undefined> {
    this.write(question);
    // After a withdrawal, longer: a `y` the person was about to type for the request they read lands nowhere.
    const guard = this.afterWithdrawal ? REPLACED_GUARD_TIMES * this.guardMs : this.guardMs;
    this.afterWithdrawal = false;
    if (this.lines.readsKeys) {
      const release = this.lines.hold();
      await guardTime(guard, signal);
      const dropped = release();
      if (signal.aborted) return undefined;
      if (dropped) this.write(` ${IGNORED}\n${question}`);
    }
    const prompt = `${question}${cue}`;
    this.write(cue);
    const since = this.lines.mark();
    const line = await this.lines.next(signal, { urgent: true, since, onSkipped: () => this.write(`  ${IGNORED}\n${prompt}`) });
    if (line !== undefined && this.echo) this.write(`${line}\n`);
    return line;
  }

  /**
   * The input ended before an approval was answered: denied, said so, and thrown (not answered
   * 'denied'), so the audit row says nobody answered (`by: no-root`), not that a person denied it.
   */
  private noAnswer(): never {
    this.write('\n  (no answer: the input ended) denied\n');
    throw new NoAnswer("no answer to the approval: the terminal's input ended");
  }

  private withdrawn<T>(value: T): T {
    this.write('\n  (withdrawn: the agent no longer waits for this)\n');
    this.afterWithdrawal = true;
    return value;
  }

  /** Writes what may hold a worker's words (the question, the options, who asks) made printable first, whatever the output. */
  private write(text: string): void {
    this.output.write(printable(text));
  }
}
