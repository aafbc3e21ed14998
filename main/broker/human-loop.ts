import { CallError } from '../fabric/admission/index.js';
import type { Answer, QuestionRequest } from '../fabric/wire/payloads.js';
import { wireError } from '../fabric/wire/wire-error.js';
import type { ApproveParams } from '../fabric/wire/worker-to-broker.js';
import type { NodeState } from './nodes.js';

/** At most this many approvals, and as many questions, wait per connection. */
export const MAX_PENDING_APPROVALS = 4;
export const MAX_PENDING_QUESTIONS = 4;

export interface Asker {
  agent: string;
  chain: string[];
}

/** An approval as the root's handler gets it: the wire's params, the asker stamped by the broker. */
export interface ApprovalRequest {
  kind: 'exec' | 'write';
  command_or_path: string;
  diff_stat?: string;
  asker: Asker;
}

/** A question as the root's handler gets it. */
export interface QuestionToRoot {
  questions: QuestionRequest['questions'];
  asker: Asker;
  origin?: string;
}

export type Verdict = 'approved' | 'denied';
export type AnswerInput = { id: string; answer: string; custom?: boolean };

export type ApprovalHandler = (request: ApprovalRequest, signal: AbortSignal) => Verdict | Promise<Verdict>;
export type QuestionHandler = (request: QuestionToRoot, signal: AbortSignal) => readonly AnswerInput[] | Promise<readonly AnswerInput[]>;

/** A question no one could carry back, as a failed root call's `metadata.clarification` holds it: the stamped request under an id of the broker's. */
export interface Clarification extends QuestionToRoot {
  id: string;
}

/** How the human loop reaches the rest of the broker. */
export interface HumanLoopHost {
  /** Sends a relayed question to a worker; resolves `{answers}` or `"escalate"`. */
  relay(worker: string, question: string, request: { questions: QuestionRequest['questions']; asker: Asker }, signal: AbortSignal): Promise<'escalate' | { answers: Answer[] }>;
  /** Whether a caller can still take a question: it has not ended and is still connected. */
  present(worker: string): boolean;
  /**
   * The root has no question handler: fail the root call under which `asker` works, quoting the
   * question, and cancel its tree. Returns false when no root call owns the asker.
   */
  clarify(asker: NodeState, request: Clarification): boolean;
}

/**
 * `human.approve` and `human.ask`. Only the root answers an approval: the broker stamps the asker
 * (admitted name and chain, whatever the worker wrote) and hands it straight to the root's
 * handler; no worker in between sees it. A question climbs the caller chain: each worker caller
 * may answer or say "escalate", and the root is the top. A caller that has ended (or goes while
 * holding the question) is passed over: the question climbs on. Each connection has at most four of
 * each waiting; a withdrawn one (the asker's `req.cancel`, its connection closing) is withdrawn
 * from whoever holds it.
 */
export class HumanLoop {
  private approvalHandler: ApprovalHandler | undefined;
  private questionHandler: QuestionHandler | undefined;
  private readonly approvals = new Map<string, number>();
  private readonly questions = new Map<string, number>();
  private nextQuestion = 0;
  private nextRequest = 0;

  constructor(private readonly host: HumanLoopHost) {}

  onApproval(handler: ApprovalHandler): () => void {
    this.approvalHandler = handler;
    return () => {
      if (this.approvalHandler === handler) this.approvalHandler = undefined;
    };
  }

  /**
   * The root call that started tree `task` has ended (any outcome): what was remembered for that
   * task alone (its task-scoped approval rules) ends with it.
   */
  rootTaskEnded(task: string): void {
    void task;
  }

  onQuestion(handler: QuestionHandler): () => void {
    this.questionHandler = handler;
    return () => {
      if (this.questionHandler === handler) this.questionHandler = undefined;
    };
  }

  async approve(from: NodeState, params: ApproveParams, signal: AbortSignal): Promise<Verdict> {
    const pending = this.approvals.get(from.name) ?? 0;
    if (pending >= MAX_PENDING_APPROVALS) return 'denied'; // the fifth is denied without asking anyone
    const handler = this.approvalHandler;
    if (!handler) return 'denied';
    const request: ApprovalRequest = {
      kind: params.kind,
      command_or_path: params.command_or_path,
      ...(params.diff_stat !== undefined ? { diff_stat: params.diff_stat } : {}),
      asker: { agent: from.name, chain: [...from.chain] },
    };
    this.approvals.set(from.name, pending + 1);
    try {
      const verdict = await withSignal(Promise.resolve().then(() => handler(request, signal)), signal);
      return verdict === 'approved' ? 'approved' : 'denied';
    } catch (err) {
      if (signal.aborted) throw new CallError(wireError({ kind: 'cancelled', reason: 'the approval was withdrawn' }));
      return 'denied'; // a handler that throws denies
    } finally {
      this.release(this.approvals, from.name);
    }
  }

  async ask(from: NodeState, params: QuestionRequest, signal: AbortSignal): Promise<Answer[]> {
    const pending = this.questions.get(from.name) ?? 0;
    if (pending >= MAX_PENDING_QUESTIONS) {
      throw new CallError(wireError({ kind: 'refused', reason: `too many questions pending: at most ${MAX_PENDING_QUESTIONS} per connection` }));
    }
    const asker: Asker = { agent: from.name, chain: [...from.chain] };
    const request: QuestionToRoot = { questions: params.questions, asker, ...(params.origin !== undefined ? { origin: params.origin } : {}) };
    const id = `req-${++this.nextRequest}`;
    this.questions.set(from.name, pending + 1);
    try {
      // Up the asker's callers, nearest first; the root is the top. The callers were fixed when the
      // asker was called: one that has ended since (its task done, its worker reaped) is passed over.
      for (const holder of from.callers) {
        if (signal.aborted) throw cancelled();
        if (!this.host.present(holder)) continue;
        const question = `question-${++this.nextQuestion}`;
        let reply: 'escalate' | { answers: Answer[] };
        try {
          reply = await this.host.relay(holder, question, { questions: request.questions, asker }, signal);
        } catch (err) {
          if (signal.aborted) throw cancelled();
          if (!this.host.present(holder)) continue; // it went while holding the question
          throw err instanceof CallError ? err : new CallError(wireError({ kind: 'failed', reason: `${holder} could not take the question: ${(err as Error)?.message ?? String(err)}` }));
        }
        if (reply !== 'escalate') return reply.answers;
      }
      if (signal.aborted) throw cancelled();
      return await this.askRoot(from, id, request, signal);
    } finally {
      this.release(this.questions, from.name);
    }
  }

  private async askRoot(from: NodeState, id: string, request: QuestionToRoot, signal: AbortSignal): Promise<Answer[]> {
    const handler = this.questionHandler;
    if (!handler) {
      // Nobody guesses an answer: the root call this worker serves fails, quoting the question.
      if (this.host.clarify(from, { id, ...request })) throw new CallError(wireError({ kind: 'cancelled', reason: 'no one can answer: the root call failed with the question' }));
      throw new CallError(wireError({ kind: 'failed', reason: 'no one can answer questions here' }));
    }
    let answers: readonly AnswerInput[];
    try {
      answers = await withSignal(Promise.resolve().then(() => handler(request, signal)), signal);
    } catch (err) {
      if (signal.aborted) throw cancelled();
      throw new CallError(wireError({ kind: 'failed', reason: (err as Error)?.message ?? String(err) }));
    }
    if (!Array.isArray(answers)) throw new CallError(wireError({ kind: 'failed', reason: 'the root answered the question with something that is not a list of answers' }));
    return answers.map((a) => ({ id: String(a.id), answer: String(a.answer), custom: a.custom === true }));
  }

  private release(counts: Map<string, number>, name: string): void {
    const n = (counts.get(name) ?? 1) - 1;
    if (n <= 0) counts.delete(name);
    else counts.set(name, n);
  }
}

function cancelled(): CallError {
  return new CallError(wireError({ kind: 'cancelled', reason: 'the question was withdrawn' }));
}

/** Rejects as soon as `signal` aborts, whatever `work` does. */
function withSignal<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
