import { describeMatch } from '../../broker/approvals/index.js';
import { checkRelayedAnswers, type ApprovalDecision, type ApprovalRequest, type QuestionToRoot } from '../../broker/index.js';
import { hasHidden } from '../../display/index.js';
import { askReach, shortDigest, type PluginGrantDecision, type PluginGrantRequest } from '../../plugins/grants/index.js';
import type { WindowSend } from './bridge-host.js';
import {
  ANSWER_LIMITS,
  EVENT_CHANNELS,
  INVOKE_CHANNELS,
  InvokeRequestSchemas,
  type AnswerApproval,
  type AnswerGrant,
  type AnswerQuestion,
  type ApprovalMatch,
  type PendingApproval,
  type PendingGrant,
  type PendingQuestion,
} from './contract.js';
import { BridgeRefusal } from './refusal.js';
import type { TaskBoard, TaskRecord } from './task-board.js';

/**
 * The number of the last request put to a page, shared by every host in the process: a window
 * moved to another bridge (of this gateway or another) never sees an id it already holds, so a
 * popover left from the old bridge can never answer the new one's request.
 */
let lastRequest = 0;
const nextRequestId = <K extends 'approval' | 'question' | 'grant'>(kind: K): `${K}-${number}` => `${kind}-${++lastRequest}`;

type Pending =
  | { kind: 'approval'; view: PendingApproval; task: TaskRecord | undefined; settle: (decision: ApprovalDecision) => void; fail: (err: Error) => void }
  | {
      kind: 'question';
      view: PendingQuestion;
      task: TaskRecord | undefined;
      settle: (answers: AnswerQuestion['answers']) => void;
      fail: (err: Error) => void;
    }
  | { kind: 'grant'; view: PendingGrant; settle: (decision: PluginGrantDecision) => void };

/**
 * What the window is asked and has not answered: the root's approvals and questions (each under the
 * task it belongs to, `TaskBoard.attribute`) and the plugins' capability requests. Each is put to
 * the window, answered only as it was asked (an answer is checked against what was shown), withdrawn
 * when its asker gives up, and denied or withdrawn when nobody is left to look at it (`withdrawAll`).
 */
export class PendingRequests {
  private readonly pending = new Map<string, Pending>();
  /** Why the capability requests handed back to the desk now leave the page (handGrantsBack), while it takes them. */
  private grantsLeaveBecause: string | undefined;

  constructor(
    private readonly tasks: TaskBoard,
    private readonly emit: WindowSend,
    /** Whether a window is there to ask. */
    private readonly windowOpen: () => boolean,
  ) {}

  /** What waits, by kind, for a snapshot. */
  views(): { approvals: PendingApproval[]; questions: PendingQuestion[]; grants: PendingGrant[] } {
    const all = [...this.pending.values()];
    return {
      approvals: all.flatMap((p) => (p.kind === 'approval' ? [p.view] : [])),
      questions: all.flatMap((p) => (p.kind === 'question' ? [p.view] : [])),
      grants: all.flatMap((p) => (p.kind === 'grant' ? [p.view] : [])),
    };
  }

  /** Sends the window each capability request waiting (a page that reads no new snapshot finds them so). */
  resendGrants(): void {
    for (const pending of this.pending.values()) if (pending.kind === 'grant') this.emit(EVENT_CHANNELS.grant, structuredClone(pending.view));
  }

  /**
   * Nobody looks at the window's approvals and questions any more: each approval is denied, each
   * question withdrawn (`tellPage`: the page is told of each). A plugin's capability request keeps
   * waiting (no agent is held up by it): the next page finds it in its snapshot.
   */
  withdrawAll(reason: string, tellPage: boolean): void {
    for (const [requestId, pending] of [...this.pending]) {
      if (pending.kind === 'grant') continue;
      this.pending.delete(requestId);
      // A page that stays (the bridge detached, the window open) closes its popover of it.
      if (tellPage) this.emit(EVENT_CHANNELS.withdrawn, { requestId, reason });
      if (pending.kind === 'approval') {
        this.tasks.addEntry(pending.task, { kind: 'verdict', text: `denied ${pending.view.commandOrPath}: ${reason}`, node: pending.view.asker.agent });
        // Nobody answered it: the human loop denies it as `no-root`, never as a person's `denied`.
        pending.fail(new Error(`nobody answered: ${reason} before it was answered`));
      } else {
        this.tasks.addEntry(pending.task, { kind: 'withdrawn', text: `question withdrawn: ${reason}`, node: pending.view.asker.agent });
        pending.fail(new Error(`the question was withdrawn: ${reason} before it was answered`));
      }
    }
  }

  /**
   * The desk takes back the capability requests handed to this host (`handBack` removes the host
   * as its handler, which aborts each): the page is told each is withdrawn, saying `reason` (the
   * page left, the window closed), not that the plugin stopped waiting. The desk hands them on.
   */
  handGrantsBack(reason: string, handBack: () => void): void {
    this.grantsLeaveBecause = reason;
    try {
      handBack();
    } finally {
      this.grantsLeaveBecause = undefined;
    }
  }

  askApproval(request: ApprovalRequest, signal: AbortSignal): ApprovalDecision | Promise<ApprovalDecision> {
    // Nobody to ask: never approved by default, and not a person's `denied` either (a handler that
    // throws is denied `by: no-root` in the audit log).
    if (!this.windowOpen() || signal.aborted) throw new Error('no window is open to show the approval');
    const requestId = nextRequestId('approval');
    const task = this.tasks.attribute(request.asker, request.task);
    // The display rule decides here too: a request the page shows with code points is never remembered.
    const hidden = request.hidden || hasHidden(request.command_or_path) || hasHidden(request.diff_stat ?? '') || hasHidden(request.lands ?? '');
    const view: PendingApproval = {
      requestId,
      taskId: task?.view.taskId ?? null,
      kind: request.kind,
      commandOrPath: request.command_or_path,
      ...(request.diff_stat !== undefined ? { diffStat: request.diff_stat } : {}),
      asker: { agent: request.asker.agent, chain: [...request.asker.chain] },
      at: Date.now(),
      role: request.role,
      ...(request.task !== undefined ? { rootTask: request.task } : {}),
      ...(request.workspace !== undefined ? { workspace: request.workspace } : {}),
      ...(request.path !== undefined ? { path: request.path } : {}),
      ...(request.outside !== undefined ? { outside: request.outside } : {}),
      ...(request.lands !== undefined ? { lands: request.lands } : {}),
      hidden,
      danger: [...request.danger],
      ...(request.unsure !== undefined ? { unsure: [...request.unsure] } : {}),
      ...(request.runs !== undefined ? { runs: request.runs.map(({ program, line }) => ({ program, line })) } : {}),
      ...(request.runsMore !== undefined ? { runsMore: request.runsMore } : {}),
      proposals: hidden ? [] : structuredClone(request.proposals),
    };
    return new Promise<ApprovalDecision>((resolve, reject) => {
      this.pending.set(requestId, { kind: 'approval', view, task, settle: resolve, fail: reject });
      signal.addEventListener(
        'abort',
        () => {
          if (!this.pending.delete(requestId)) return;
          this.tasks.addEntry(task, { kind: 'withdrawn', text: `approval withdrawn: ${request.command_or_path}`, node: request.asker.agent });
          this.emit(EVENT_CHANNELS.withdrawn, { requestId, reason: 'the asker withdrew it' });
          reject(new Error('withdrawn'));
        },
        { once: true },
      );
      this.tasks.addEntry(task, { kind: 'approval', text: `asks to ${request.kind} ${request.command_or_path}`, node: request.asker.agent });
      this.emit(EVENT_CHANNELS.approval, structuredClone(view));
    });
  }

  askQuestion(request: QuestionToRoot, signal: AbortSignal): Promise<AnswerQuestion['answers']> {
    if (!this.windowOpen()) return Promise.reject(new Error('no window is open to answer the question'));
    if (signal.aborted) return Promise.reject(new Error('withdrawn'));
    // A question the page could not answer is refused here, not shown to wait forever.
    const unanswerable = unanswerableBecause(request);
    if (unanswerable !== undefined) return Promise.reject(new Error(`the question cannot be answered: ${unanswerable}`));
    const requestId = nextRequestId('question');
    const task = this.tasks.attribute(request.asker);
    const view: PendingQuestion = {
      requestId,
      taskId: task?.view.taskId ?? null,
      questions: request.questions.map((q) => ({ id: q.id, question: q.question, options: [...q.options] })),
      asker: { agent: request.asker.agent, chain: [...request.asker.chain] },
      ...(request.origin !== undefined ? { origin: request.origin } : {}),
      at: Date.now(),
    };
    return new Promise((resolve, reject) => {
      this.pending.set(requestId, { kind: 'question', view, task, settle: resolve, fail: reject });
      signal.addEventListener(
        'abort',
        () => {
          if (!this.pending.delete(requestId)) return;
          this.tasks.addEntry(task, { kind: 'withdrawn', text: 'question withdrawn by its asker', node: request.asker.agent });
          this.emit(EVENT_CHANNELS.withdrawn, { requestId, reason: 'the asker withdrew it' });
          reject(new Error('withdrawn'));
        },
        { once: true },
      );
      this.tasks.addEntry(task, { kind: 'question', text: `asks: ${request.questions.map((q) => q.question).join(' / ')}`, node: request.asker.agent });
      this.emit(EVENT_CHANNELS.question, structuredClone(view));
    });
  }

  answerApproval({ requestId, verdict, remember, match }: AnswerApproval): { accepted: true } {
    const pending = this.pending.get(requestId);
    if (!pending || pending.kind !== 'approval') throw new BridgeRefusal(`refused ${INVOKE_CHANNELS.answerApproval}: no approval ${requestId} is waiting`);
    const view = pending.view;
    let decision: ApprovalDecision = verdict;
    if (remember !== undefined) {
      const refuse = (why: string): never => {
        throw new BridgeRefusal(`refused ${INVOKE_CHANNELS.answerApproval}: ${why}`);
      };
      if (view.hidden) refuse(`${requestId} holds hidden characters: it may be approved once only`);
      if (view.proposals.length === 0) refuse(`${requestId} offers nothing to remember`);
      if (remember === 'task' && view.rootTask === undefined) refuse(`${requestId} belongs to no root task`);
      // The window would name no task (or a task the broker's records do not place it in) for a rule scoped to one.
      if (remember === 'task' && view.taskId === null) refuse(`${requestId} is shown under no task: the broker's records do not place it in one`);
      if (match !== undefined && !view.proposals.some((p) => sameMatch(p, match))) refuse(`the match is not one ${requestId} offers`);
      decision = { verdict: 'approved', remember, ...(match !== undefined ? { match } : {}) };
    }
    this.pending.delete(requestId);
    const scope = remember === undefined ? '' : ` (${remember === 'task' ? 'for this task' : 'always for this agent'}: ${describeMatch(match ?? { exact: view.commandOrPath })})`;
    this.tasks.addEntry(pending.task, { kind: 'verdict', text: `${verdict} ${view.commandOrPath}${scope}`, node: view.asker.agent });
    pending.settle(decision);
    return { accepted: true };
  }

  answerQuestion({ requestId, answers }: AnswerQuestion): { accepted: true } {
    const pending = this.pending.get(requestId);
    if (!pending || pending.kind !== 'question') throw new BridgeRefusal(`refused ${INVOKE_CHANNELS.answerQuestion}: no question ${requestId} is waiting`);
    const asked = pending.view.questions.map((q) => q.id).sort();
    const given = answers.map((a) => a.id).sort();
    if (asked.length !== given.length || asked.some((id, i) => id !== given[i])) {
      throw new BridgeRefusal(`refused ${INVOKE_CHANNELS.answerQuestion}: the answers must answer each of ${requestId}'s questions once`);
    }
    // `custom: false` tells the asker the person chose one of its options: it must be one, exactly.
    for (const a of answers) {
      const options = pending.view.questions.find((q) => q.id === a.id)?.options ?? [];
      if (!a.custom && !options.includes(a.answer)) {
        throw new BridgeRefusal(`refused ${INVOKE_CHANNELS.answerQuestion}: the answer to ${a.id} is marked as a chosen option but is not one of the options of ${a.id}`);
      }
    }
    // The channel counts characters; the broker passes on only what the asker's wire may carry
    // (RootTransport.onQuestion: 16 K control characters are 96 KiB there). Refused here, the
    // question still waits and the page says why; accepted here, it was refused out of sight.
    const tooLong = checkRelayedAnswers(pending.view.questions, answers);
    if (tooLong !== undefined) throw new BridgeRefusal(`refused ${INVOKE_CHANNELS.answerQuestion}: ${tooLong}: answer more briefly`);
    this.pending.delete(requestId);
    this.tasks.addEntry(pending.task, { kind: 'answer', text: `answered ${answers.map((a) => a.answer).join(' / ')}`, node: pending.view.asker.agent });
    pending.settle(answers.map((a) => ({ ...a })));
    return { accepted: true };
  }

  /**
   * A plugin's capability request, put to the window as a popover of its own kind. It waits for
   * an answer however long it takes, with no window too (the next one finds it in its snapshot):
   * nothing is granted or denied by anyone's absence. Withdrawn (the module unloaded, the registry
   * closing, this bridge closed: the desk hands it to its next handler), the popover closes.
   */
  askGrant(request: PluginGrantRequest, signal: AbortSignal): PluginGrantDecision | Promise<PluginGrantDecision> {
    if (signal.aborted) return 'denied';
    const requestId = nextRequestId('grant');
    const view: PendingGrant = {
      requestId,
      plugin: request.plugin,
      version: request.version,
      digest: request.digest,
      digestShort: shortDigest(request.digest),
      asks: request.asks.map((ask) => ({ capability: ask.capability, detail: ask.detail, reach: askReach(ask) })),
      ...(request.dir !== undefined ? { dir: request.dir } : {}),
      at: Date.now(),
    };
    return new Promise<PluginGrantDecision>((resolve) => {
      this.pending.set(requestId, { kind: 'grant', view, settle: resolve });
      signal.addEventListener(
        'abort',
        () => {
          if (!this.pending.delete(requestId)) return;
          this.emit(EVENT_CHANNELS.withdrawn, { requestId, reason: this.grantsLeaveBecause ?? 'the plugin no longer waits for it' });
          resolve('denied');
        },
        { once: true },
      );
      this.emit(EVENT_CHANNELS.grant, structuredClone(view));
    });
  }

  answerGrant({ requestId, decision }: AnswerGrant): { accepted: true } {
    const pending = this.pending.get(requestId);
    if (!pending || pending.kind !== 'grant') throw new BridgeRefusal(`refused ${INVOKE_CHANNELS.answerGrant}: no capability request ${requestId} is waiting`);
    this.pending.delete(requestId);
    pending.settle(decision);
    return { accepted: true };
  }
}

function sameMatch(a: ApprovalMatch, b: ApprovalMatch): boolean {
  if ('exact' in a) return 'exact' in b && a.exact === b.exact;
  if ('prefix' in a) return 'prefix' in b && a.prefix === b.prefix;
  return 'glob' in b && a.glob === b.glob;
}

/** Why the page could not answer `request` (its answers would be refused), or undefined when it can. */
function unanswerableBecause(request: QuestionToRoot): string | undefined {
  const parsed = InvokeRequestSchemas[INVOKE_CHANNELS.answerQuestion].safeParse({
    requestId: 'question-1',
    answers: request.questions.map((q) => ({ id: q.id, answer: '', custom: false })),
  });
  if (!parsed.success) {
    const n = request.questions.length;
    if (n === 0) return 'it has no question';
    if (n > ANSWER_LIMITS.questions) return `it has ${n} questions (at most ${ANSWER_LIMITS.questions})`;
    return `a question id is empty or longer than ${ANSWER_LIMITS.idChars} characters`;
  }
  if (new Set(request.questions.map((q) => q.id)).size !== request.questions.length) return 'two questions have the same id';
  return undefined;
}
