import { WorkerResults, type WorkerResultOf } from '../fabric/wire/worker-to-broker.js';
import { wireError, type WireError } from '../fabric/wire/wire-error.js';
import type { AnswerInput, RelayedQuestion } from './wire-types.js';

/** What a question handler gives back: the answers, or `'escalate'` to send the question on up. */
export type QuestionReply = readonly AnswerInput[] | 'escalate';

/**
 * Answers a question relayed to this worker from one of its callees. `signal` aborts when the broker
 * withdraws the question (`req.cancel`: the asker withdrew or its call ended) or the connection closes.
 */
export type QuestionHandler = (request: RelayedQuestion, signal: AbortSignal) => QuestionReply | Promise<QuestionReply>;

/**
 * The broker's relayed `human.ask` requests and their one answer each. Without a handler the answer
 * is `"escalate"` at once. With one, the answer is what it gives once it settles, even after a
 * withdrawal (the broker drops it); a handler that throws answers an error frame: `cancelled` if
 * the question had been withdrawn, else `failed` with its message; a reply that does not fit the
 * wire answers `failed` too rather than sending a frame the broker would close the connection for.
 */
export class RelayedQuestions {
  private handler: QuestionHandler | undefined;
  private readonly open = new Map<number, AbortController>();

  constructor(
    private readonly answer: (id: number, result: WorkerResultOf<'human.ask'> | { answers: readonly AnswerInput[] }) => void,
    private readonly fail: (id: number, error: WireError) => void,
  ) {}

  /** Sets the one handler (replacing any); returns a function that removes it if it is still the one set. */
  setHandler(handler: QuestionHandler): () => void {
    this.handler = handler;
    return () => {
      if (this.handler === handler) this.handler = undefined;
    };
  }

  receive(id: number, request: RelayedQuestion): void {
    const handler = this.handler;
    if (!handler) {
      this.answer(id, 'escalate');
      return;
    }
    const withdraw = new AbortController();
    this.open.set(id, withdraw);
    // Called now, in order with the frames around it; a synchronous throw is a rejection.
    const replied = new Promise<QuestionReply>((resolve) => resolve(handler(request, withdraw.signal)));
    replied.then(
      (reply) => {
        this.open.delete(id);
        if (reply === 'escalate') {
          this.answer(id, reply);
          return;
        }
        const result = { answers: reply };
        // The wire's own `{answers}` shape, checked alone so that the complaint names the field at fault.
        const checked = WorkerResults['human.ask'].options[1].safeParse(result);
        if (checked.success) this.answer(id, result);
        else this.fail(id, wireError({ kind: 'failed', reason: `the question handler's reply does not fit the wire: ${describe(checked.error.issues)}` }));
      },
      (err: unknown) => {
        this.open.delete(id);
        if (withdraw.signal.aborted) this.fail(id, wireError({ kind: 'cancelled', reason: 'the question was withdrawn' }));
        else this.fail(id, wireError({ kind: 'failed', reason: (err as Error)?.message ?? String(err) }));
      },
    );
  }

  /** The broker's `req.cancel` for `id`; false if `id` is no question of ours in flight. */
  withdraw(id: number, reason: Error): boolean {
    const withdraw = this.open.get(id);
    withdraw?.abort(reason);
    return withdraw !== undefined;
  }

  withdrawAll(reason: Error): void {
    for (const withdraw of this.open.values()) withdraw.abort(reason);
  }
}

function describe(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues.map((issue) => (issue.path.length ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message)).join('; ');
}
