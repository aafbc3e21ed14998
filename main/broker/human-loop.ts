import { CallError } from '../fabric/admission/index.js';
import type { Answer, QuestionRequest } from '../fabric/wire/payloads.js';
import { wireError } from '../fabric/wire/wire-error.js';
import { untilAborted } from '../jsonrpc/index.js';
import type { ApproveParams } from '../fabric/wire/worker-to-broker.js';
import type { NodeState } from './nodes.js';
import { ApprovalMatch, ApprovalRules, AuditLog, ConfigPlaces, coversLanding, hasLoneSurrogate, matches, namesEveryTag, oversized, vouchedContext, type AuditRow, type DecidedBy, type VouchedContext } from './approvals/index.js';
import { boundedRun } from './approvals/audit-log.js';
import { checkQuestionRequest } from './question-limits.js';

/** At most this many approvals, and as many questions, wait per connection. */
export const MAX_PENDING_APPROVALS = 4;
export const MAX_PENDING_QUESTIONS = 4;

export interface Asker {
  agent: string;
  chain: string[];
}

/**
 * An approval as the root's handler gets it: the wire's params, the asker stamped by the broker,
 * and what the gateway vouches for from its own records (never the worker's word): the root task,
 * the asker's workspace, a write's resolved path, the danger tags, the matches it offers.
 */
export interface ApprovalRequest extends VouchedContext {
  kind: 'exec' | 'write';
  command_or_path: string;
  diff_stat?: string;
  asker: Asker;
  /** The asker's role: what a remembered rule is scoped to ("always for this agent"). */
  role: string;
}

/**
 * A verdict; "approved" may ask to remember it for the root task or always (for the asker's role),
 * for `match` (default: the exact command or path). A `ModeDecision` is a standing answer no one
 * gave for this request (`--approvals allow|deny`): its audit row says so (`by: mode:allow|deny`).
 */
export type ApprovalDecision = Verdict | RememberDecision | ModeDecision;

/** An approval the person asks to remember. */
export type RememberDecision = { verdict: 'approved'; remember: 'task' | 'always'; match?: ApprovalMatch };

/** The root's mode answered: `allow` approves, `deny` denies, each named as such in the audit row. */
export type ModeDecision = { verdict: 'approved'; by: 'mode:allow' } | { verdict: 'denied'; by: 'mode:deny' };

/** A question as the root's handler gets it. */
export interface QuestionToRoot {
  questions: QuestionRequest['questions'];
  asker: Asker;
  origin?: string;
}

export type Verdict = 'approved' | 'denied';
export type AnswerInput = { id: string; answer: string; custom?: boolean };

export type ApprovalHandler = (request: ApprovalRequest, signal: AbortSignal) => ApprovalDecision | Promise<ApprovalDecision>;
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
  /** The root task `node` works under while that root call runs; undefined when it works under none. */
  rootTask?(node: NodeState): string | undefined;
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
  /** The remembered decisions (task rules end with their root task; "always" rules in a file when one is set). */
  readonly rules: ApprovalRules;
  /** One row per approval decision. */
  readonly audit: AuditLog;
  /** The embedder's own configuration files beyond the rules file and the audit log (`protectConfig`). */
  private configFiles: () => readonly string[] = () => [];

  constructor(
    private readonly host: HumanLoopHost,
    private readonly log: (message: string) => void = () => {},
  ) {
    this.rules = new ApprovalRules(log);
    this.audit = new AuditLog(log);
  }

  /**
   * Names the files, beside the rules file and approvals.log (always), that decide what this
   * gateway lets through (the plugins' grants file, each plugins.lock): a request that writes one,
   * or a folder holding one, or names one, is tagged `gateway-config`, which no rule approves.
   */
  protectConfig(files: () => readonly string[]): void {
    this.configFiles = files;
  }

  /** The gateway's own files as they are now (the rules file and the log may be set late). */
  private configPlaces(): ConfigPlaces {
    const files = [this.rules.filePath, this.audit.file, ...this.configFiles()];
    return new ConfigPlaces(files.filter((file): file is string => file !== undefined));
  }

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
    this.rules.endTask(task);
  }

  onQuestion(handler: QuestionHandler): () => void {
    this.questionHandler = handler;
    return () => {
      if (this.questionHandler === handler) this.questionHandler = undefined;
    };
  }

  /**
   * One approval: the rules first (a deny rule wins; an allow rule never for a hidden or
   * differently dangerous request), then the root's handler (at most four waiting per connection);
   * every decision is one audit row.
   */
  async approve(from: NodeState, params: ApproveParams, signal: AbortSignal): Promise<Verdict> {
    const task = this.host.rootTask?.(from);
    /** Records the request's audit row (`text`: what was asked and its danger, or its size alone) and returns the verdict. */
    const record = (verdict: Verdict, by: DecidedBy, text: Pick<AuditRow, 'command_or_path' | 'size' | 'danger' | 'workspace' | 'lands' | 'runs' | 'runsMore'>, remembered?: string): Verdict => {
      this.audit.record({
        time: new Date().toISOString(),
        ...(task !== undefined ? { task } : {}),
        agent: from.name,
        role: from.role,
        chain: [...from.chain],
        kind: params.kind,
        // Where: the asker's workspace (a task grant holds in one), and where a write lands through links.
        ...(text.workspace !== undefined ? { workspace: text.workspace } : {}),
        command_or_path: text.command_or_path,
        ...(text.size !== undefined ? { size: text.size } : {}),
        ...(text.lands !== undefined ? { lands: text.lands } : {}),
        danger: text.danger,
        // What the person was shown the line may run (`!! tar may run: …`): what was approved, named.
        ...(text.runs !== undefined ? { runs: text.runs.map(boundedRun) } : {}),
        ...(text.runsMore !== undefined ? { runsMore: text.runsMore } : {}),
        verdict,
        by,
        ...(remembered !== undefined ? { remembered } : {}),
      });
      return verdict;
    };
    // Past what a person reads: refused unread, before any reading of it, rule or handler; the row keeps its size only.
    const size = oversized(params.command_or_path, params.diff_stat);
    if (size !== undefined) return record('denied', 'too-long', { command_or_path: '', size, danger: [], workspace: from.spawnContext.workspace_root });
    // Half of a UTF-16 pair is no character: shown as a marker, it reaches a program or a file name as U+FFFD's bytes.
    if (hasLoneSurrogate(params.command_or_path) || (params.diff_stat !== undefined && hasLoneSurrogate(params.diff_stat))) {
      return record('denied', 'unpaired', { command_or_path: params.command_or_path, danger: [], workspace: from.spawnContext.workspace_root });
    }
    // A diff stat describes a write; on a command it is only the worker's account of what running
    // it does, drawn beside what the gateway vouches for: not shown to anyone (the log says so).
    const diffStat = params.kind === 'write' ? params.diff_stat : undefined;
    if (params.diff_stat !== undefined && diffStat === undefined) this.log(`the diff stat ${from.name} sent with a command to approve is not shown: a command is approved by its text alone`);
    const request: ApprovalRequest = {
      kind: params.kind,
      command_or_path: params.command_or_path,
      ...(diffStat !== undefined ? { diff_stat: diffStat } : {}),
      asker: { agent: from.name, chain: [...from.chain] },
      role: from.role,
      ...vouchedContext(params.kind, params.command_or_path, diffStat, from.spawnContext.workspace_root, task, this.configPlaces()),
    };
    const decided = (verdict: Verdict, by: DecidedBy, remembered?: string): Verdict =>
      record(verdict, by, { command_or_path: request.command_or_path, danger: request.danger, workspace: request.workspace, lands: request.lands, runs: request.runs, runsMore: request.runsMore }, remembered);
    const ruled = this.rules.decide(request);
    if (ruled && ruled.effect !== 'ask') return decided(ruled.effect === 'allow' ? 'approved' : 'denied', `rule:${ruled.rule.id}`);
    // A deny rule may cover what the gateway cannot read: a person may approve it, a mode may not.
    const unsure = ruled?.effect === 'ask' ? ruled.rule : undefined;
    const pending = this.approvals.get(from.name) ?? 0;
    if (pending >= MAX_PENDING_APPROVALS) return decided('denied', 'limit'); // the fifth is denied without asking anyone
    const handler = this.approvalHandler;
    if (!handler) return decided('denied', 'no-root');
    this.approvals.set(from.name, pending + 1);
    let decision: ApprovalDecision;
    try {
      decision = await untilAborted(Promise.resolve().then(() => handler(request, signal)), signal);
    } catch {
      if (signal.aborted) {
        decided('denied', 'withdrawn');
        throw new CallError(wireError({ kind: 'cancelled', reason: 'the approval was withdrawn' }));
      }
      return decided('denied', 'no-root'); // a handler that throws denies: nobody answered
    } finally {
      this.release(this.approvals, from.name);
    }
    if (decision === 'approved') return decided('approved', 'human');
    if (typeof decision !== 'object' || decision === null) return decided('denied', 'human');
    if ('by' in decision) {
      if (unsure && decision.verdict === 'approved' && decision.by === 'mode:allow') return decided('denied', `rule:${unsure.id}`);
      return this.byMode(decision, decided);
    }
    if (decision.verdict !== 'approved') return decided('denied', 'human');
    return decided('approved', 'human', this.remember(from, request, decision));
  }

  /**
   * A mode's answer: `approved` with `mode:allow`, `denied` with `mode:deny`. Any other pairing (a
   * JavaScript handler's mistake) denies, recorded as the handler's own answer (`human`), like any
   * other malformed answer.
   */
  private byMode(decision: ModeDecision, decided: (verdict: Verdict, by: DecidedBy) => Verdict): Verdict {
    if (decision.verdict === 'approved' && decision.by === 'mode:allow') return decided('approved', 'mode:allow');
    if (decision.verdict === 'denied' && decision.by === 'mode:deny') return decided('denied', 'mode:deny');
    this.log(`an approval handler answered ${JSON.stringify(decision)}: not a mode's answer, denied`);
    return decided('denied', 'human');
  }

  /**
   * Adds the rule a person asked for with an approval, scoped to the asker's role: for the root
   * task (only while it runs) or always. Not remembered (the approval stands, once): a hidden
   * request, a match that is malformed, does not cover the request or does not name its danger
   * tags, a task rule with no running root task, a file that cannot be written.
   */
  private remember(from: NodeState, request: ApprovalRequest, decision: RememberDecision): string | undefined {
    const refuse = (why: string): undefined => {
      this.log(`the approval of ${JSON.stringify(request.command_or_path)} by ${from.name} is not remembered: ${why}`);
      return undefined;
    };
    if (request.hidden) return refuse('it holds hidden characters');
    const parsed = ApprovalMatch.safeParse(decision.match ?? { exact: request.command_or_path });
    if (!parsed.success) return refuse('its match is malformed');
    const match = parsed.data;
    if (!matches(match, request) || !coversLanding(match, request)) return refuse('its match does not cover it (or where it lands)');
    if (!namesEveryTag(match, request.kind, request.workspace, request.danger)) return refuse('its match does not name its danger tags');
    let task: string | undefined;
    if (decision.remember === 'task') {
      task = this.host.rootTask?.(from);
      if (task === undefined || task !== request.task) return refuse('its root task is not running');
    } else if (decision.remember !== 'always') return refuse('remember is neither "task" nor "always"');
    try {
      // A task grant holds where the person saw the request: another folder of the same task (a delegation may name any inside its caller's) is asked.
      const scope = task !== undefined ? { task, ...(request.workspace !== undefined ? { workspace: request.workspace } : {}) } : {};
      return this.rules.add({ effect: 'allow', kind: request.kind, agent: from.role, match, ...scope }).id;
    } catch (err) {
      return refuse((err as Error)?.message ?? String(err));
    }
  }

  async ask(from: NodeState, params: QuestionRequest, signal: AbortSignal): Promise<Answer[]> {
    // What cannot be answered is refused at the wire, before anyone is shown it.
    const malformed = checkQuestionRequest(params);
    if (malformed !== undefined) throw new CallError(wireError({ kind: 'refused', reason: malformed }));
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
      answers = await untilAborted(Promise.resolve().then(() => handler(request, signal)), signal);
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
